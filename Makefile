# tabscreen: `make demo` screens the bundled references; `make test` runs every test.
# Both install what is missing first and are safe to run twice.
export PATH := $(PATH):/usr/local/go/bin
R_LIB := $(CURDIR)/.rlib
export R_LIBS := $(R_LIB)
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := tabscreen_$(VERSION).tar.gz
PROVIDER ?= a

.PHONY: all deps install test test-go test-r check demo bench docs clean

all: install

deps:
	@tools/install-deps.sh

install: deps
	@mkdir -p $(R_LIB)
	R CMD INSTALL --no-test-load --library=$(R_LIB) . >/tmp/tabscreen-install.log 2>&1 || { cat /tmp/tabscreen-install.log; exit 1; }
	@echo "tabscreen installed into $(R_LIB)"

docs: install
	Rscript -e 'roxygen2::roxygenise(roclets = c("rd", "namespace"), load_code = roxygen2::load_installed)'

test: deps test-go install test-r check

test-go:
	go vet ./...
	go test -race -count=1 -timeout 10m ./...

# Every phase is bounded, so that a hang fails the run in minutes instead of eating CI's budget.
test-r: install
	timeout 900 Rscript tools/run-tests.R

check: deps
	rm -rf tabscreen.Rcheck $(TARBALL)
	R CMD build --no-manual . >/tmp/tabscreen-build.log 2>&1 || { cat /tmp/tabscreen-build.log; exit 1; }
	_R_CHECK_FORCE_SUGGESTS_=false timeout 1200 R CMD check --no-manual $(TARBALL)
	@Rscript tools/check-result.R tabscreen.Rcheck

demo: install
	Rscript tools/demo.R $(PROVIDER)

bench: install
	Rscript bench/run.R

clean:
	rm -rf $(R_LIB) tabscreen.Rcheck $(TARBALL) src/*.o src/*.so src/libtabscreen.h inst/bin
