// The API group both kinds are served under: KusionStack's, so its manifests apply unchanged.
export const GROUP = "apps.kusionstack.io";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
