#!/usr/bin/env bash
# make data: put fra-eng.zip (English–French pairs for labs 03 and 06) under ./data/.
# Idempotent: an intact copy already there is left alone. Sources, in order: ../shared/data/
# (copied), then d2l's download URL with curl or wget. Fashion-MNIST comes from Debian's
# dataset-fashion-mnist package (make deps), not from here.
set -u
cd "$(dirname "$0")/../.." || exit 1
URL=http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip
DEST=data/fra-eng.zip
SHARED=../shared/data/fra-eng.zip

# A usable archive: a zip whose listing has fra-eng/fra.txt (unzip -t when available).
valid_zip() {
  [ -s "$1" ] || return 1
  if command -v unzip >/dev/null 2>&1; then
    unzip -tqq "$1" >/dev/null 2>&1 && unzip -l "$1" 2>/dev/null | grep -q 'fra-eng/fra.txt'
  else
    [ "$(head -c 2 "$1")" = "PK" ]
  fi
}

if valid_zip "$DEST"; then
  echo "data: $DEST already present"
  exit 0
fi
mkdir -p data || { echo "data: cannot create ./data/" >&2; exit 1; }

if [ -f "$SHARED" ]; then
  rm -f "$DEST.part"
  cp "$SHARED" "$DEST.part" && chmod u+w "$DEST.part" && mv "$DEST.part" "$DEST"
  if valid_zip "$DEST"; then echo "data: copied $SHARED -> $DEST"; exit 0; fi
  echo "data: $SHARED is damaged; trying the download" >&2
  rm -f "$DEST"
fi

fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --connect-timeout 15 --max-time 300 -o "$DEST.part" "$URL"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -T 15 -O "$DEST.part" "$URL"
  else
    return 2
  fi
}
echo "data: downloading $URL"
fetch; rc=$?
if [ $rc -eq 0 ] && valid_zip "$DEST.part"; then
  mv "$DEST.part" "$DEST"
  echo "data: saved $DEST"
  exit 0
fi
rm -f "$DEST.part"
{
  if [ $rc -eq 2 ]; then echo "data: neither curl nor wget is installed, so fra-eng.zip cannot be downloaded."
  else echo "data: could not download $URL (no network, or the file was damaged)."; fi
  echo "Do one of these, then run 'make data' again (or just run the lab):"
  echo "  - download $URL on a machine with network and copy it to $(pwd)/data/fra-eng.zip"
  echo "  - put it in a directory and pass --data-dir DIR to the lab, or set D2L_DATA_DIR=DIR"
  echo "  - install curl or wget if the network works"
} >&2
exit 1
