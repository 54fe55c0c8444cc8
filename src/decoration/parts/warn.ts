// How a template part reports something it could not render as asked: the field of the
// decoration's template it concerns, and what happened instead.
export type Warn = (templatePath: string, message: string) => void;
