#!/usr/bin/env bash
# The docs site: `make docs` for every lab (short runs) into a temporary directory, then
#   * the site: index.html lists every lab, each page links home and to its neighbours, uses
#     the stylesheet, loads nothing from the network, captions its figures (not with file
#     names), sets \mathrm names (softmax) upright in Chromium's MathML;
#   * every page opened in headless Chromium at 1280 px (tests/tools/pagecheck.js): no script
#     or console error, no failed load, every image loaded, no code block, figure, table or
#     formula overflowing the page, no code hidden behind a scroll bar.
# Screenshots of every page go to $DOCS_SHOTS when it is set (keep them out of the repository).
# Skips (and says so) without pandoc or chromium. Run from the repository root.
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin docs_site

if ! command -v pandoc >/dev/null 2>&1; then
  skip "pandoc not found (make deps-dev installs it): no HTML site to check"
  suite_end
  exit $?
fi
site=$tmp/site
# short runs: the page's structure is what is checked here, not the training (so the prose's
# claims about a full run are noted in the pages, not errors: DOCS_CLAIMS=note)
if make -s docs DOCS_DIR="$site" DOCS_ARGS_lab03="--epochs 3" DOCS_ARGS_lab06="--epochs 3" \
  DOCS_ARGS_lab07="--steps 5" DOCS_TIMEOUT=300 DOCS_CLAIMS=note >"$tmp/make.log" 2>&1; then
  ok "make docs into a temporary directory"
else
  bad "make docs failed:"
  tail -15 "$tmp/make.log"
fi
labs=$(ls chapters/*/lab[0-9][0-9].c | sort -t/ -k3 | xargs -n1 basename | sed 's/\.c$//')
check "index.html written" test -s "$site/index.html"
check "style.css beside the pages" test -s "$site/style.css"
prev=""
for lab in $labs; do
  page=$site/$lab.html
  if [ ! -s "$page" ]; then
    bad "$lab.html not written"
    continue
  fi
  check "index links $lab.html" grep -q "href=\"$lab.html\"" "$site/index.html"
  check "$lab: links home" grep -q 'href="index.html"' "$page"
  check "$lab: uses the stylesheet" grep -q '<link rel="stylesheet" href="style.css"' "$page"
  if [ -n "$prev" ]; then
    check "$lab: previous is $prev" grep -q "rel=\"prev\" href=\"$prev.html\"" "$page"
    check "$prev: next is $lab" grep -q "rel=\"next\" href=\"$lab.html\"" "$site/$prev.html"
  fi
  prev=$lab
  # a path of the building machine (the run printed it; the weave shows the kit's names)
  if grep -Pq '(?<![\w:/.\-~$])/(tmp|home|root|work|Users|mnt|var)/' "$site/$lab.md"; then
    bad "$lab: the page holds a path outside the kit: $(grep -Po '(?<![\w:/.\-~$])/(tmp|home|root|work|Users|mnt|var)/\S*' "$site/$lab.md" | head -1)"
  else
    ok "$lab: no path of the building machine in the page"
  fi
  # offline: nothing fetched from elsewhere (links to pages are fine, resources are not)
  if grep -Eq '<(script|img|link)[^>]*(src|href)="(https?:)?//' "$page"; then
    bad "$lab: loads a resource from the network: $(grep -Eo '<(script|img|link)[^>]*(src|href)="(https?:)?//[^"]*' "$page" | head -1)"
  else
    ok "$lab: nothing loaded from the network"
  fi
  # every referenced image exists, every figure has a caption that is more than its file name
  missing=0 nfig=0 badcap=0
  for src in $(grep -o '<img src="[^"]*"' "$page" | sed 's/<img src="//; s/"$//'); do
    nfig=$((nfig + 1))
    [ -s "$site/$src" ] || { missing=$((missing + 1)); echo "  missing: $src"; }
    name=$(basename "$src" .png)
    if tr '\n' ' ' <"$page" | grep -Eq "<figcaption[^>]*>(Figure [0-9]+\. )?$name</figcaption>"; then
      badcap=$((badcap + 1))
      echo "  caption is the file name: $name (add it to docs/captions.txt)"
    fi
  done
  if [ $missing = 0 ]; then ok "$lab: all $nfig referenced figure files exist"; else bad "$lab: $missing figure files missing"; fi
  ncap=$(grep -c '<figcaption' "$page")
  if [ "$ncap" = "$nfig" ] && [ $badcap = 0 ]; then ok "$lab: $nfig figures, each with a real caption"; else
    bad "$lab: $nfig figures, $ncap captions, $badcap only a file name"
  fi
  # a figure the lab drew but never announced lands in a stray closing section
  if grep -q '<h2 id="figures">Figures</h2>' "$page"; then
    bad "$lab: figures in a closing 'Figures' section (the lab did not print [figure ...] for them)"
  else
    ok "$lab: every figure where it was drawn"
  fi
  # \mathrm{softmax} as pandoc writes it is one italic <mi> per letter in Chromium
  if grep -q '<mstyle mathvariant="normal"><mi>[^<]</mi><mi>' "$page"; then
    bad "$lab: upright names still set letter by letter (italic in Chromium)"
  else
    ok "$lab: upright operator names"
  fi
done
if grep -q '<mi>softmax</mi>' "$site/lab01.html" 2>/dev/null; then ok "lab01: softmax is one upright <mi>"; else
  bad "lab01: no <mi>softmax</mi> (\\mathrm{softmax} in the chapter)"
fi

# ---------------------------------------------------------------- in Chromium
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  skip "chromium not found: pages not opened in a browser (apt-get install chromium)"
  suite_end
  exit $?
fi
js=$(cd tests/tools && pwd)/pagecheck.js
browse() { # extra flags..., URL
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
    --user-data-dir="$tmp/chromium" \
    --window-size=1280,900 --virtual-time-budget=5000 "$@"
}
for page in index $labs; do
  [ -s "$site/$page.html" ] || continue
  # a copy beside the page (same relative paths) with the checker loaded before anything else
  sed "0,/<head>/s||<head><script src=\"file://$js\"></script>|" "$site/$page.html" >"$site/_check_$page.html"
  browse --dump-dom "file://$site/_check_$page.html" >"$tmp/$page.dom" 2>"$tmp/$page.err"
  result=$(grep -o '<pre id="pagecheck">[^<]*</pre>' "$tmp/$page.dom" | sed 's/<[^>]*>//g')
  if [ -z "$result" ]; then
    bad "$page: chromium gave no result ($(tail -1 "$tmp/$page.err"))"
  elif echo "$result" | grep -q '"problems":\[\]'; then
    ok "$page: renders in Chromium at 1280 px: no errors, nothing overflows, all images load"
  else
    bad "$page in Chromium: $(echo "$result" | sed 's/&quot;/"/g' | head -c 600)"
  fi
  # console messages chromium itself logs (errors the page script could not see)
  if grep -q 'CONSOLE.*ERROR\|Uncaught' "$tmp/$page.err"; then
    bad "$page: console error: $(grep -m1 'CONSOLE.*ERROR\|Uncaught' "$tmp/$page.err")"
  fi
  rm -f "$site/_check_$page.html"
  if [ -n "${DOCS_SHOTS:-}" ]; then
    mkdir -p "$DOCS_SHOTS"
    browse --hide-scrollbars --window-size=1280,4000 --screenshot="$DOCS_SHOTS/$page.png" \
      "file://$site/$page.html" >/dev/null 2>&1
  fi
done
suite_end
