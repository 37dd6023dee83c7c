#!/usr/bin/env bash
# site.sh — the pieces of the docs site around the woven pages (docs/docs.mk, docs/weave.sh):
#   site.sh nav LAB      the header/footer bar of LAB's page: home, previous and next lab
#   site.sh index DIR    DIR/index.html (the seven labs, their titles, whether built), the two
#                        guides as HTML, and DIR/style.css
# The lab list is every chapters/NN_*/labNN.c in this checkout, in order; a title is the
# chapter's first '# ' heading. Run from the repository root.
set -u
chapters() { ls chapters/*/lab[0-9][0-9].c 2>/dev/null | sort -t/ -k3; }
title_of() { sed -n 's/^# //p' "$1" | head -1; }
html_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
lab_of() { basename "$1" .c; }
num_of() { local l; l=$(lab_of "$1"); echo "${l#lab}" | sed 's/^0//'; }

nav() {
  local lab=$1 prev="" next="" found=no
  local list
  list=$(chapters)
  for src in $list; do
    if [ $found = yes ]; then next=$src; break; fi
    if [ "$(lab_of "$src")" = "$lab" ]; then found=yes; else prev=$src; fi
  done
  printf '<nav class="pager">'
  if [ -n "$prev" ]; then
    printf '<a rel="prev" href="%s.html">&larr; %s. %s</a>' "$(lab_of "$prev")" "$(num_of "$prev")" "$(title_of "$prev" | html_escape)"
  fi
  if [ -n "$next" ]; then
    printf '<a rel="next" href="%s.html">%s. %s &rarr;</a>' "$(lab_of "$next")" "$(num_of "$next")" "$(title_of "$next" | html_escape)"
  fi
  printf '</nav>'
}

index() {
  local dir=$1
  # the guides turned into HTML beside the pages: not the instructor's in a handout's pages
  # (DOCS_HANDOUT=yes, tests/grade/handout.sh) or where the kit has none (a handout itself)
  local guides=student-guide
  [ "${DOCS_HANDOUT:-}" != yes ] && [ -f docs/instructor-guide.md ] && guides="$guides instructor-guide"
  mkdir -p "$dir" || return 1
  [ "$(cd "$dir" && pwd)" = "$(cd docs && pwd)" ] || cp docs/style.css "$dir/style.css"
  {
    echo '---'
    echo 'pagetitle: "attention-lab: the chapters"'
    echo '---'
    echo '# attention-lab'
    echo
    echo 'The "Attention Mechanisms and Transformers" chapter of *Dive into Deep Learning*, as seven'
    echo 'literate C programs. Each page is woven by `make docs` from the chapter source: the prose,'
    echo 'the code, what the program printed and the figures it drew, in the order the program runs.'
    echo
    echo '<ol class="labs">'
    for src in $(chapters); do
      local lab t
      lab=$(lab_of "$src")
      t=$(title_of "$src" | html_escape)
      if [ -f "$dir/$lab.html" ]; then
        printf '<li value="%s"><a href="%s.html">%s</a> <span class="src">%s</span></li>\n' "$(num_of "$src")" "$lab" "$t" "$src"
      else
        printf '<li value="%s">%s <span class="src">%s: not woven yet (make docs DOCS_LABS=%s)</span></li>\n' "$(num_of "$src")" "$t" "$src" "$lab"
      fi
    done
    echo '</ol>'
    echo
    echo '## Guides'
    echo
    echo '- [Student guide](student-guide.html): setting up, running a lab, the exercises, grading yourself.'
    # (a student handout has no instructor guide: no link to it there)
    case " $guides " in *" instructor-guide "*)
      echo '- [Instructor guide](instructor-guide.html): handouts, hidden tests, grading submissions.' ;;
    esac
  } >"$dir/index.md"
  local nav_html='<header class="site"><a href="index.html">attention-lab</a></header>'
  printf '%s\n' "$nav_html" >"$dir/.nav_index.html"
  # pandoc's warnings fail the site as they fail a page (docs/weave.sh)
  local warn=$dir/.pandoc_index.log
  (cd "$dir" && pandoc --from markdown --to html5 --standalone --css style.css \
    --include-before-body .nav_index.html -o index.html index.md) 2>"$warn" && [ ! -s "$warn" ] ||
    { echo "docs: pandoc failed or warned on $dir/index.md:" >&2; cat "$warn" >&2; rm -f "$warn"; return 1; }
  for g in $guides; do
    [ -f "docs/$g.md" ] || continue
    pandoc --from markdown --to html5 --standalone --css style.css --mathml \
      --metadata pagetitle="attention-lab: $(sed -n 's/^# //p' "docs/$g.md" | head -1)" \
      --include-before-body "$dir/.nav_index.html" -o "$dir/$g.html" "docs/$g.md" 2>"$warn" &&
      [ ! -s "$warn" ] ||
      { echo "docs: pandoc failed or warned on docs/$g.md:" >&2; cat "$warn" >&2; rm -f "$warn"; return 1; }
  done
  rm -f "$warn"
  rm -f "$dir/.nav_index.html"
  echo "docs: wrote $dir/index.html"
}

case ${1:-} in
nav) nav "$2" ;;
index) index "$2" ;;
*)
  echo "usage: site.sh nav LAB | site.sh index DIR" >&2
  exit 2
  ;;
esac
