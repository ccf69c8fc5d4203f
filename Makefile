# floe — make targets. Everything runs with the Bun that `npm install` puts in node_modules.
BUN    := node_modules/.bin/bun
PEGGY  := node_modules/.bin/peggy
PARSER_RULES := Statement,SelectStatement,CreateStatement
# The SQL grammar, split by concept; peggy combines the files in this order (the first file's first
# rule is the default start rule). test/sql/parser-fresh.test.ts reads both lines.
GRAMMAR := lib/sql/grammar/statements.peggy lib/sql/grammar/select.peggy lib/sql/grammar/expressions.peggy lib/sql/grammar/create.peggy lib/sql/grammar/lexical.peggy

.PHONY: deps provision install uninstall dist deb man run run-mqtt test build check parser ui bench bench-quick clean

# npm install (Bun comes from the npm registry into node_modules/.bin/bun).
deps: node_modules/.installed

node_modules/.installed: package.json
	npm install --no-audit --no-fund --loglevel=error
	@touch $@

# The bundled demo: a rule from rules/ over a fixture from fixtures/ (no broker, no network).
run: deps
	$(BUN) cli.ts run rules/demo.sql --input fixtures/demo.jsonl

# The bundled live example: rules/mqtt-hot.sql against a local broker (tcp://127.0.0.1:1883;
# MQTT_SOURCE__DEFAULT__SERVER=… for another). Ctrl-C stops it.
run-mqtt: deps
	$(BUN) cli.ts run rules/mqtt-hot.sql

# The whole suite: unit tests, the conformance vectors, golden cases, the compiled binary. Tests
# that spawn processes (CLI verbs, daemons, brokers) get 20 s rather than 5 s on a loaded machine.
# It first installs the Debian packages its tests run (chromium, prometheus for promtool,
# nats-server, mosquitto, redis-server, lintian) when one is missing (test/provision.sh, as root).
test: deps provision build man
	$(BUN) test --timeout 20000

provision:
	@sh test/provision.sh

# Compiled executables (bun build --compile): linux x64 and arm64.
build: dist/floe dist/floe-linux-arm64

SOURCES := cli.ts package.json $(shell find lib generated -name '*.ts' -o -name '*.js' 2>/dev/null)

# Built files live in generated/, outside lib/, and are committed so that `bun cli.ts …` runs on a
# fresh clone with nothing built; a test fails when one is stale.
# The web console's script (lib/server/console/ui/ → generated/console/app.js). The executable
# embeds it as a file.
UI_JS  := generated/console/app.js
UI_SRC := $(shell find lib/server/console/ui -name '*.ts' -o -name '*.css' 2>/dev/null)

ui: $(UI_JS)

$(UI_JS): $(UI_SRC)
	$(BUN) build lib/server/console/ui/main.ts --minify --target=browser --outfile $@

# Two builds: the first runs the common starts (packaging/bytecode-order.ts) to record the order in
# which they use the bytecode; the second lays the bytecode out in that order, so a start touches
# fewer pages of the executable (docs/performance.md, "Start-up"). The arm64 build reuses the x64 orders. Should the first
# build not run here, the executable is built without an order.
COMPILE := $(BUN) build --compile --minify --bytecode --format=esm --splitting
ORDER   := dist/.bytecode-order

dist/floe: node_modules/.installed $(SOURCES) packaging/bytecode-order.ts
	@mkdir -p $(ORDER)
	$(COMPILE) --target=bun-linux-x64 cli.ts --outfile $(ORDER)/floe
	$(BUN) packaging/bytecode-order.ts $(ORDER)/floe $(ORDER) > $(ORDER)/flags || { echo "make: no bytecode order (the first build did not run)"; : > $(ORDER)/flags; }
	rm -f $(ORDER)/floe
	$(COMPILE) --target=bun-linux-x64 $$(cat $(ORDER)/flags) cli.ts --outfile $@

dist/floe-linux-arm64: dist/floe
	$(COMPILE) --target=bun-linux-arm64 $$(cat $(ORDER)/flags) cli.ts --outfile $@

# Regenerates the SQL parser (generated/sql/parser.js) from the grammar.
parser: deps
	$(PEGGY) --format es --allowed-start-rules $(PARSER_RULES) -o generated/sql/parser.js $(GRAMMAR)

# Static checks: types, the bundled rules, golden cases.
check: deps
	node_modules/.bin/tsc -p .
	node_modules/.bin/tsc -p lib/server/console/ui
	$(BUN) cli.ts check rules/*.sql
	$(BUN) cli.ts test --quiet fixtures/golden

# The benchmark harness (../shared/spec/bench.md; bench/run.ts): the generator's ceiling, the MQTT rate
# ladder of W1–W5 with 3 × 60 s of the top step, floe against the hand-written floor, Node-RED (installed into bench/.node-red/) on W1/W2,
# memory over time, replay throughput, rule density (bench/density.ts: N rules over one stream, plain and
# varied); regenerates bench/RESULTS.md. Takes about an hour and a quarter.
bench: deps build
	$(BUN) bench/run.ts --ceiling
	$(BUN) bench/run.ts w1 w2 w3 w4 w5 w1-qos1 w2-1m
	$(BUN) bench/run.ts w1 w2 --latency --reps 0
	$(BUN) bench/run.ts w1 w2 --engine node-red
	$(BUN) bench/run.ts --vs-floor --rates 100000 --step-seconds 30 --reps 1
	$(BUN) bench/run.ts --soak w2 w4
	$(BUN) bench/run.ts --replay
	$(BUN) bench/density.ts --rules 100,1000,2000,5000 --seconds 10 --settle 3 --save
	$(BUN) bench/density.ts --varied --rules 100,1000 --seconds 10 --settle 3 --save
	$(BUN) bench/run.ts --report

# One 10 s step at 20k msg/s of every workload, proved exact (under 3 minutes).
bench-quick: deps build
	$(BUN) bench/run.ts --quick

# floe(1) from the help text of every command.
man: dist/floe.1

dist/floe.1: node_modules/.installed $(SOURCES) packaging/gen-man.ts
	@mkdir -p dist
	$(BUN) packaging/gen-man.ts > $@

# make install [PREFIX=/usr/local] [DESTDIR=…] [BIN=dist/floe]: the binary (and `kuiper`, the same
# binary under eKuiper's CLI name), the hardened systemd unit with ExecStart under PREFIX, the man
# page, shell completions and an example kuiper.yaml. The service's config, data and log
# directories (/etc/floe, /var/lib/floe, /var/log/floe) are created by systemd when it starts.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR  ?= $(PREFIX)/share/man
SHAREDIR ?= $(PREFIX)/share
BIN     ?= dist/floe

install: $(BIN) dist/floe.1
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(SHAREDIR)/floe \
	  $(DESTDIR)$(SHAREDIR)/bash-completion/completions $(DESTDIR)$(SHAREDIR)/zsh/site-functions $(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/floe
	ln -sf floe $(DESTDIR)$(BINDIR)/kuiper
	sed 's|/usr/local/bin/floe|$(BINDIR)/floe|' packaging/floe.service > $(DESTDIR)$(UNITDIR)/floe.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/floe.service
	install -m 0644 dist/floe.1 $(DESTDIR)$(MANDIR)/man1/floe.1
	install -m 0644 packaging/kuiper.yaml $(DESTDIR)$(SHAREDIR)/floe/kuiper.yaml
	$(BIN) completion bash > $(DESTDIR)$(SHAREDIR)/bash-completion/completions/floe
	$(BIN) completion zsh > $(DESTDIR)$(SHAREDIR)/zsh/site-functions/_floe
	$(BIN) completion fish > $(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d/floe.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/floe $(DESTDIR)$(BINDIR)/kuiper $(DESTDIR)$(UNITDIR)/floe.service $(DESTDIR)$(MANDIR)/man1/floe.1 \
	  $(DESTDIR)$(SHAREDIR)/bash-completion/completions/floe $(DESTDIR)$(SHAREDIR)/zsh/site-functions/_floe \
	  $(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d/floe.fish
	rm -rf $(DESTDIR)$(SHAREDIR)/floe

# Release archives: dist/floe-VERSION-linux-{x64,arm64}.tar.gz (binary, unit, man page, example
# config, README) and dist/SHA256SUMS.
VERSION := $(shell sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' package.json)

dist: dist/floe dist/floe-linux-arm64 dist/floe.1
	@set -e; for arch in x64 arm64; do \
	  name=floe-$(VERSION)-linux-$$arch; rm -rf dist/$$name; mkdir -p dist/$$name; \
	  if [ $$arch = x64 ]; then cp dist/floe dist/$$name/floe; else cp dist/floe-linux-arm64 dist/$$name/floe; fi; \
	  cp packaging/floe.service packaging/kuiper.yaml dist/floe.1 README.md dist/$$name/; \
	  tar -C dist -czf dist/$$name.tar.gz $$name; rm -rf dist/$$name; \
	done
	cd dist && sha256sum floe-$(VERSION)-linux-*.tar.gz > SHA256SUMS

# Debian packages of the compiled executables: dist/floe_VERSION_{amd64,arm64}.deb, built with
# dpkg-deb by packaging/deb/build.sh (the executable at /usr/bin/floe, the unit, man page,
# completions, /etc/floe/kuiper.yaml as a conffile, a floe system user; enables and starts nothing).
deb: dist/floe dist/floe-linux-arm64 dist/floe.1
	sh packaging/deb/build.sh amd64 dist/floe dist/floe.1 dist
	FLOE_HOST_BIN=dist/floe sh packaging/deb/build.sh arm64 dist/floe-linux-arm64 dist/floe.1 dist

clean:
	rm -rf dist
