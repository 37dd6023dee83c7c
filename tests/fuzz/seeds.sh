#!/usr/bin/env bash
# seeds.sh DIR — small seed corpora for the harnesses, cut from the real files where this
# machine has them: the first lines of fra-eng.zip's fra.txt (rezipped, deflated and stored,
# with a __MACOSX entry), the first images and labels of Fashion-MNIST's t10k files (IDX, gzip
# and plain), a checkpoint written by checkpoint_save, and the labs' own command lines.
# Without a data file its seeds are built from a few lines in the same format (said once).
set -u
out=${1:?seeds.sh DIR}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$out"/{fuzz_zip,fuzz_gz_idx,fuzz_fra,fuzz_ckpt,fuzz_cli}
PY=$(command -v python3) || { echo "seeds.sh: python3 is needed (make deps-dev)"; exit 1; }
fra=""
for d in "${D2L_DATA_DIR:-}" ./data ../shared/data; do
  [ -n "$d" ] && [ -f "$d/fra-eng.zip" ] && { fra="$d/fra-eng.zip"; break; }
done
mnist=""
for d in "${D2L_DATA_DIR:-}" ./data ../shared/data /usr/share/datasets/fashion-mnist; do
  [ -n "$d" ] && [ -f "$d/t10k-images-idx3-ubyte.gz" ] && { mnist=$d; break; }
done
[ -n "$fra" ] || echo "seeds.sh: no fra-eng.zip (make data): zip and fra.txt seeds are built from a few made-up lines"
[ -n "$mnist" ] || echo "seeds.sh: no Fashion-MNIST (make deps): IDX seeds are built from zeros"
"$PY" - "$out" "$fra" "$mnist" <<'PYEOF'
import gzip, io, os, struct, sys, zipfile
out, fra, mnist = sys.argv[1], sys.argv[2], sys.argv[3]
def put(sub, name, data):
    with open(os.path.join(out, sub, name), "wb") as f:
        f.write(data)
if fra:
    with zipfile.ZipFile(fra) as z:
        member = [n for n in z.namelist() if n.endswith("fra.txt") and not n.startswith("__MACOSX")][0]
        lines = z.read(member).split(b"\n")
else:
    lines = [b"Go.\tVa !", b"Hi.\tSalut !", b"Run!\tCours\xe2\x80\xaf!", b"I lost.\tJ'ai perdu."] * 8
text = b"\n".join(lines[:40]) + b"\n"
for comp, tag in ((zipfile.ZIP_DEFLATED, "deflated"), (zipfile.ZIP_STORED, "stored")):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", comp) as z:
        z.writestr("__MACOSX/fra-eng/._fra.txt", b"\0\5\x16\7junk")
        z.writestr("fra-eng/fra.txt", text)
    put("fuzz_zip", "fra_40_lines_%s.zip" % tag, b.getvalue())
put("fuzz_fra", "fra_40_lines.txt", text)
put("fuzz_fra", "fra_10_lines.txt", b"\n".join(lines[:10]) + b"\n")
if mnist:
    imgs = gzip.open(os.path.join(mnist, "t10k-images-idx3-ubyte.gz")).read(16 + 2 * 784)
    labs = gzip.open(os.path.join(mnist, "t10k-labels-idx1-ubyte.gz")).read(8 + 2)
    imgs = struct.pack(">IIII", 0x803, 2, 28, 28) + imgs[16:]
    labs = struct.pack(">II", 0x801, 2) + labs[8:]
else:
    imgs = struct.pack(">IIII", 0x803, 2, 28, 28) + bytes(2 * 784)
    labs = struct.pack(">II", 0x801, 2) + bytes([9, 2])
put("fuzz_gz_idx", "t10k_images_2.gz", gzip.compress(imgs))
put("fuzz_gz_idx", "t10k_labels_2.gz", gzip.compress(labs))
put("fuzz_gz_idx", "t10k_labels_2.idx", labs)
# the labs' command lines: profile byte, then the arguments split by NUL
for i, args in enumerate([
        [b"--epochs", b"3", b"--preset", b"d2l-1.0", b"--translate", b"go ."],
        [b"--seed=7", b"--out", b"out/x", b"--device", b"cpu", b"--steps", b"-4", b"--lr", b"2.5e-3"],
        [b"--epochs", b"0", b"--no-heldout", b"--data-dir=/tmp"],
        [b"--help"], [b"--preset", b"d2l-0.17", b"--epochs", b"1024"]]):
    put("fuzz_cli", "argv_%d" % i, bytes([i % 3]) + b"\0".join(args))
PYEOF
[ $? -eq 0 ] || exit 1
if [ -x build/fuzz/fuzz_ckpt ]; then
  AL_FUZZ_SEED_OUT="$out/fuzz_ckpt/model.ckpt" build/fuzz/fuzz_ckpt >/dev/null 2>&1 ||
    { echo "seeds.sh: fuzz_ckpt could not write its seed checkpoint"; exit 1; }
fi
exit 0
