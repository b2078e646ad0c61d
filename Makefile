# tabscreen: `make demo` screens the bundled references; `make test` runs every test.
# Both install what is missing first and are safe to run twice.
export PATH := $(PATH):/usr/local/go/bin
R_LIB := $(CURDIR)/.rlib
export R_LIBS := $(R_LIB)
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := tabscreen_$(VERSION).tar.gz
PROVIDER ?= a

.PHONY: all deps install tarball test test-go test-r test-browser test-site test-windows test-configure test-cross test-offline check demo bench docs site clean

all: install

deps:
	@tools/install-deps.sh

# The vignettes are built with the installed package into inst/doc (not in git) and installed with
# it, so that vignette("tabscreen") works (tools/install-vignettes.R; nothing to do when up to date).
install: deps
	@mkdir -p $(R_LIB)
	R CMD INSTALL --no-test-load --library=$(R_LIB) . >$(R_LIB)/.install.log 2>&1 || { cat $(R_LIB)/.install.log; exit 1; }
	Rscript tools/install-vignettes.R $(R_LIB)
	@echo "tabscreen installed into $(R_LIB)"

docs: install
	Rscript -e 'roxygen2::roxygenise(roclets = c("rd", "namespace"), load_code = roxygen2::load_installed)'

# Go, the configure script, the macOS compile, the R tests, the review page in a browser, the
# website, R CMD check of the source package as users get it (Go modules inside), its install with
# no network, and the Windows cross-build.
test: deps test-go test-cross test-configure install test-r test-browser test-site check test-offline test-windows

# The source package with its Go modules inside (src/go-vendor.tar.xz): installs offline.
tarball: deps
	rm -f $(TARBALL)
	tools/build-tarball.sh $(CURDIR)

test-go:
	go vet ./...
	go test -race -count=1 -timeout 10m ./...

# The Windows build, cross-compiled with mingw-w64 and run under Wine (tools/windows/).
test-windows:
	timeout 1200 tools/windows/test-windows.sh

# configure's search for Go and its message when Go is missing or too old.
test-configure:
	timeout 300 tools/test-configure.sh

# macOS cannot be run here: the Go code must at least compile and vet for it (without cgo).
test-cross:
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build ./golib/... ./cmd/...
	GOOS=darwin GOARCH=amd64 CGO_ENABLED=0 go build ./golib/... ./cmd/...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go vet ./golib/... ./cmd/...

# Every phase is bounded, so that a hang fails the run in minutes instead of eating CI's budget.
test-r: install
	timeout 900 Rscript tools/run-tests.R

# screen_review() in headless Chromium: keys, reload, a killed app, two reviewers, hostile text.
test-browser: install
	timeout 900 tools/test-browser.sh

# The pkgdown website, into docs/ (not in git): every example and article run, no warning allowed.
site: install
	Rscript tools/build-site.R docs
	Rscript tools/check-site.R docs

# The website built into a scratch folder, checked (no error or warning shown, no broken internal
# link), and the home page and a reference page rendered in headless Chromium (SITE_SHOTS=DIR keeps
# the screenshots).
test-site: install
	timeout 900 tools/test-site.sh

check: tarball
	rm -rf tabscreen.Rcheck
	_R_CHECK_FORCE_SUGGESTS_=false timeout 1200 R CMD check --no-manual $(TARBALL)
	@Rscript tools/check-result.R tabscreen.Rcheck

# R CMD INSTALL of the source package in a network namespace with no network, then a screening.
test-offline: tarball
	timeout 900 tools/test-offline-install.sh $(TARBALL)

demo: install
	Rscript tools/demo.R $(PROVIDER)

bench: install
	Rscript bench/run.R

clean:
	rm -rf $(R_LIB) tabscreen.Rcheck $(TARBALL)
	./cleanup
