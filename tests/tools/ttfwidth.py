"""Advance widths of a TrueType font, read from its own tables (cmap format 4 + hmtx).

Used by figcheck.py to measure figure titles independently of plot.c's own estimate.
width_em(text) returns the text's width in em; None when the font cannot be read."""
import struct


class Font:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.d = d = f.read()
        n = struct.unpack(">H", d[4:6])[0]
        self.t = {}
        for i in range(n):
            tag, _, off, ln = struct.unpack(">4sIII", d[12 + 16 * i:28 + 16 * i])
            self.t[tag.decode("latin-1")] = (off, ln)
        head = self.t["head"][0]
        self.upem = struct.unpack(">H", d[head + 18:head + 20])[0]
        hhea = self.t["hhea"][0]
        self.nhm = struct.unpack(">H", d[hhea + 34:hhea + 36])[0]
        self.cmap = self._cmap4()

    def _cmap4(self):
        d, base = self.d, self.t["cmap"][0]
        n = struct.unpack(">H", d[base + 2:base + 4])[0]
        for i in range(n):
            pid, eid, off = struct.unpack(">HHI", d[base + 4 + 8 * i:base + 12 + 8 * i])
            sub = base + off
            if struct.unpack(">H", d[sub:sub + 2])[0] == 4 and pid in (0, 3):
                return sub
        raise ValueError("no cmap format 4 subtable")

    def glyph(self, ch):
        d, sub, c = self.d, self.cmap, ord(ch)
        segx2 = struct.unpack(">H", d[sub + 6:sub + 8])[0]
        ends = sub + 14
        starts = ends + segx2 + 2
        deltas = starts + segx2
        ranges = deltas + segx2
        for i in range(segx2 // 2):
            end = struct.unpack(">H", d[ends + 2 * i:ends + 2 * i + 2])[0]
            if c > end:
                continue
            start = struct.unpack(">H", d[starts + 2 * i:starts + 2 * i + 2])[0]
            if c < start:
                return 0
            delta = struct.unpack(">h", d[deltas + 2 * i:deltas + 2 * i + 2])[0]
            ro = struct.unpack(">H", d[ranges + 2 * i:ranges + 2 * i + 2])[0]
            if ro == 0:
                return (c + delta) & 0xFFFF
            p = ranges + 2 * i + ro + 2 * (c - start)
            g = struct.unpack(">H", d[p:p + 2])[0]
            return (g + delta) & 0xFFFF if g else 0
        return 0

    def advance(self, ch):
        g = min(self.glyph(ch), self.nhm - 1)
        off = self.t["hmtx"][0] + 4 * g
        return struct.unpack(">H", self.d[off:off + 2])[0] / self.upem

    def width_em(self, text):
        return sum(self.advance(ch) for ch in text)


if __name__ == "__main__":
    import sys
    f = Font(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    print(", ".join("%d" % round(f.advance(chr(c)) * 1000) for c in range(32, 127)))
