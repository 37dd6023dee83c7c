#!/usr/bin/env python3
"""fatbin_list.py FILE... — the GPU code an nvcc object or a linked program carries, one line
per image: "FILE: ELF sm_75" (machine code) or "FILE: PTX sm_90" (PTX, compiled by the driver
at start), what `cuobjdump --list-elf --list-ptx` lists. For toolkits without cuobjdump (a
minimal CUDA install, like this kit's CI): it reads the ELF's .nv_fatbin section and the
headers nvcc's fatbinary writes there. That layout is not documented by NVIDIA; it is the one
open-source readers of fatbins use (magic 0xBA55ED50, version, header size, size; then per
image: kind 1 = PTX / 2 = ELF, header size, payload size, ..., the sm number at byte 28), and
tests/suites/gpu_arch.sh compares this reading with cuobjdump's where both exist. Exit 1 when a
file has no .nv_fatbin section or a header does not parse."""
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50


def nv_fatbin(path):
    """The bytes of the .nv_fatbin section of a 64-bit little-endian ELF file, or None."""
    with open(path, 'rb') as f:
        elf = f.read()
    if elf[:4] != b'\x7fELF' or elf[4] != 2 or elf[5] != 1:
        raise ValueError('not a 64-bit little-endian ELF file')
    shoff, = struct.unpack_from('<Q', elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3A)
    def section(i):  # name offset, file offset, size
        base = shoff + i * shentsize
        name, = struct.unpack_from('<I', elf, base)
        off, size = struct.unpack_from('<QQ', elf, base + 0x18)
        return name, off, size
    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        end = elf.index(b'\0', stroff + name)
        if elf[stroff + name:end] == b'.nv_fatbin':
            return elf[off:off + size]
    return None


def images(fb):
    """(kind, sm) for each image of each fatbin in the section (a linked program holds one
    fatbin per object, each aligned)."""
    pos = 0
    while pos + 16 <= len(fb):
        magic, _version, hsize, fsize = struct.unpack_from('<IHHQ', fb, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # padding between two objects' fatbins
            continue
        p, end = pos + hsize, pos + hsize + fsize
        while p < end:
            kind, _, ehsize, size = struct.unpack_from('<HHIQ', fb, p)
            arch, = struct.unpack_from('<I', fb, p + 28)
            if kind not in (1, 2) or ehsize < 32 or p + ehsize + size > end:
                raise ValueError('a fatbin image header at offset %d does not parse' % p)
            yield ('PTX' if kind == 1 else 'ELF'), 'sm_%d' % arch
            p += ehsize + size
        pos = end


def main(argv):
    rc = 0
    for path in argv[1:]:
        try:
            fb = nv_fatbin(path)
            if fb is None:
                print('%s: no .nv_fatbin section (no GPU code)' % path, file=sys.stderr)
                rc = 1
                continue
            for kind, sm in sorted(set(images(fb))):
                print('%s: %s %s' % (path, kind, sm))
        except (OSError, ValueError, struct.error) as e:
            print('%s: %s' % (path, e), file=sys.stderr)
            rc = 1
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv))
