# floe — make targets. Everything runs with the Bun that `npm install` puts in node_modules.
BUN    := node_modules/.bin/bun
PEGGY  := node_modules/.bin/peggy
PARSER_RULES := Statement,SelectStatement,CreateStatement

.PHONY: install run run-mqtt test build check parser ui bench bench-quick clean

install: node_modules/.installed

node_modules/.installed: package.json
	npm install --no-audit --no-fund --loglevel=error
	@touch $@

# The bundled demo: a rule from rules/ over a fixture from fixtures/ (no broker, no network).
run: install
	$(BUN) cli.ts run rules/demo.sql --input fixtures/demo.jsonl

# The bundled live example: rules/mqtt-hot.sql against a local broker (tcp://127.0.0.1:1883;
# MQTT_SOURCE__DEFAULT__SERVER=… for another). Ctrl-C stops it.
run-mqtt: install
	$(BUN) cli.ts run rules/mqtt-hot.sql

# The whole suite: unit tests, the conformance vectors, golden cases, the compiled binary. Tests
# that spawn processes (CLI verbs, daemons, brokers) get 20 s rather than 5 s on a loaded machine.
test: install build
	$(BUN) test --timeout 20000

# Compiled executables (bun build --compile): linux x64 and arm64.
build: dist/floe dist/floe-linux-arm64

SOURCES := cli.ts package.json $(shell find lib -name '*.ts' -o -name '*.js' 2>/dev/null)

# The web console's script (lib/server/console/ui/ → assets/app.js, committed; a test fails when it
# is stale). The executable embeds it as a file.
UI_JS  := lib/server/console/assets/app.js
UI_SRC := $(shell find lib/server/console/ui -name '*.ts' -o -name '*.css' 2>/dev/null)

ui: $(UI_JS)

$(UI_JS): $(UI_SRC)
	$(BUN) build lib/server/console/ui/main.ts --minify --target=browser --outfile $@

dist/floe: install $(SOURCES)
	$(BUN) build --compile --minify --bytecode --target=bun-linux-x64 cli.ts --outfile $@

dist/floe-linux-arm64: install $(SOURCES)
	$(BUN) build --compile --minify --bytecode --target=bun-linux-arm64 cli.ts --outfile $@

# Regenerates the SQL parser from the grammar (committed; a test fails when it is stale).
parser: install
	$(PEGGY) --format es --allowed-start-rules $(PARSER_RULES) -o lib/sql/parser.js lib/sql/grammar.peggy

# Static checks: types, the bundled rules, golden cases.
check: install
	node_modules/.bin/tsc -p .
	node_modules/.bin/tsc -p lib/server/console/ui
	$(BUN) cli.ts check rules/*.sql
	$(BUN) cli.ts test --quiet fixtures/golden

# The benchmark harness (../shared/spec/bench.md; bench/run.ts): the generator's ceiling, the MQTT rate
# ladder of W1–W5 with 3 × 60 s of the top step, Node-RED (installed into bench/.node-red/) on W1/W2,
# memory over time, replay throughput; regenerates bench/RESULTS.md. Takes about an hour.
bench: install build
	$(BUN) bench/run.ts --ceiling
	$(BUN) bench/run.ts w1 w2 w3 w4 w5
	$(BUN) bench/run.ts w1 w2 --engine node-red
	$(BUN) bench/run.ts --soak w2 w4
	$(BUN) bench/run.ts --replay

# One 10 s step at 20k msg/s of every workload, proved exact (under 3 minutes).
bench-quick: install build
	$(BUN) bench/run.ts --quick

clean:
	rm -rf dist
