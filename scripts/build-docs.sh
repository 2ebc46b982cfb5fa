#!/usr/bin/env bash
# `make docs`: builds the DocC documentation as static HTML into .build/docs and fails on any
# DocC warning (broken symbol link, undocumented parameter, bad directive...).
#   1. scripts/check-doc-snippets.sh: the articles' code is the compiled DocSnippets code.
#   2. Symbol graphs of the public API (`swift package dump-symbol-graph`, which builds first).
#   3. One archive per documented module: WCSApi2 with the catalog DocC/WCSApi2.docc (articles,
#      tutorial) plus docs/ARCHITECTURE.md as its Architecture article, WCSMedia, WCSTransport and WCSLocalServer from their doc comments alone; then
#      `docc merge` combines them under one landing page.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
DOCC=${DOCC:-$(command -v docc || echo /opt/swift/usr/bin/docc)}
modules=(WCSApi2 WCSMedia WCSTransport WCSLocalServer)
work=.build/docc-work
output=.build/docs
started=$(date +%s)

scripts/check-doc-snippets.sh

"$SWIFT" package dump-symbol-graph --minimum-access-level public >"$work.log" 2>&1 ||
  { cat "$work.log"; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$work.log" | tail -1)
graphs_done=$(date +%s)
[ -d "$graphs" ] || { cat "$work.log"; echo "build-docs: no symbol graph directory" >&2; exit 1; }

rm -rf "$work" "$output"
mkdir -p "$work"
archives=()
for module in "${modules[@]}"; do
  mkdir -p "$work/graphs/$module"
  cp "$graphs/$module".symbols.json "$work/graphs/$module/"
  catalog=()
  if [ -d "DocC/$module.docc" ]; then
    # The Architecture article is docs/ARCHITECTURE.md itself (one copy), added to a copy of
    # the catalog.
    cp -R "DocC/$module.docc" "$work/$module.docc"
    if [ "$module" = WCSApi2 ]; then
      cp docs/ARCHITECTURE.md "$work/$module.docc/Articles/Architecture.md"
    fi
    catalog=("$work/$module.docc")
  fi
  "$DOCC" convert "${catalog[@]}" \
    --additional-symbol-graph-dir "$work/graphs/$module" \
    --output-path "$work/$module.doccarchive" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.wcsapi2-linux.$module" \
    --fallback-default-module-kind Framework \
    --transform-for-static-hosting \
    --warnings-as-errors
  archives+=("$work/$module.doccarchive")
  echo "build-docs: $module converted ($(($(date +%s) - graphs_done)) s since the symbol graphs)"
done

"$DOCC" merge "${archives[@]}" --output-path "$output" \
  --synthesized-landing-page-name "WCSApi2 for Linux"
finished=$(date +%s)
echo "build-docs: $output ready in $((finished - started)) s" \
  "(symbol graphs $((graphs_done - started)) s, docc $((finished - graphs_done)) s);" \
  "open $output/documentation/wcsapi2/index.html through a web server"
