# Two commands for a new user:  `make demo` (set up, then run the oracle over every app's tasks)
# and `make test` (set up, then run the test suite). Both install what is missing first.
# Nothing here names an app: apps are found in apps/*/app.toml (`mcpworld apps install` installs each).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Debian packages the core needs: a virtual X display, a window manager with its session bus,
# libxdo for input, rsync for snapshot restores, bubblewrap to sandbox the agent's tools.
DEBS   := xvfb xfwm4 dbus dbus-x11 libxdo3 xdotool rsync x11-utils procps imagemagick bubblewrap
# The docker backend: Debian's Docker engine, and debootstrap for the base image where no registry answers.
DOCKER_DEBS := docker.io debootstrap
# The tests look at the HTML report in headless Chromium (through Playwright, which drives Debian's build).
TEST_DEBS := chromium
STAMP  := $(VENV)/.setup-done

.PHONY: setup docker demo test test-debs test-local test-docker snapshots builds clean

setup: $(STAMP)

$(STAMP): pyproject.toml $(wildcard apps/*/app.toml)
	@missing=$$(for p in $(DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/mcpworld apps install
	touch $(STAMP)

# Install and start the Docker engine, then build the desktop images and app layers (cached by inputs).
docker: setup
	@missing=$$(for p in $(DOCKER_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	$(BIN)/mcpworld images engine
	$(BIN)/mcpworld images build --desktop xfce --desktop kde

demo: setup
	$(BIN)/mcpworld run --mode hybrid --agent oracle

test-debs:
	@missing=$$(for p in $(TEST_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

test: setup docker test-debs
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=40; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# The two halves of `make test`, for CI machines that run jobs side by side.
test-local: setup test-debs
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=40 -m "not docker"; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

test-docker: setup docker
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=40 -m docker; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

snapshots: setup
	$(BIN)/mcpworld apps snapshots

# Source builds with debug symbols of every app that declares one ([build] in its app.toml), into builds/.
builds: setup
	$(BIN)/mcpworld apps build --from-source

clean:
	rm -rf $(VENV) runs
