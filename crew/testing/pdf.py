"""``write_pdf``: a small text PDF, written by hand, for tests of crews that read PDFs.

A test of a ``PDFKnowledgeSource`` needs a PDF whose text it knows, without shipping binary
fixtures or a PDF library. This writes the plainest valid PDF (one Helvetica text stream per
page, an exact cross-reference table), which pypdf, browsers and viewers all read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def write_pdf(path: Path | str, pages: Sequence[str]) -> Path:
    """Write ``pages`` (the text of each page; lines split on newlines) to a PDF at ``path``."""
    count = len(pages)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
        + b"] /Count %d >>" % count,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for number, text in enumerate(pages):
        stream = _text_stream(text)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % (5 + 2 * number)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    target = Path(path)
    target.write_bytes(bytes(out))
    return target


def _text_stream(text: str) -> bytes:
    lines = [b"BT", b"/F1 11 Tf", b"14 TL", b"50 750 Td"]
    for line in text.splitlines() or [""]:
        escaped = line.encode("latin-1", "replace").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
        lines.append(b"(" + escaped + b") Tj T*")
    lines.append(b"ET")
    return b"\n".join(lines)
