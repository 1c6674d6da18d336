#!/bin/sh
# Bundle the library into dist/cart.txt (a stand-in for a real bundler).
set -e
cd "$(dirname "$0")/.."
mkdir -p dist
cat src/config.js src/utils/format.js src/cart.js > dist/cart.txt
echo "built dist/cart.txt ($(wc -l < dist/cart.txt) lines)"
