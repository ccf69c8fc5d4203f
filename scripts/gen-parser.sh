#!/bin/sh
# Compiles lib/sql/grammar.peggy ahead of time into lib/sql/parser.js (never at start-up).
set -e
cd "$(dirname "$0")/.."
node_modules/.bin/peggy --format es --allowed-start-rules Statement,SelectStatement,CreateStatement \
  -o lib/sql/parser.js lib/sql/grammar.peggy
