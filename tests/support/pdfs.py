"""PDF files built by hand for the tests: :func:`pdf_file` numbers the objects it is given
(object 1 is the catalog) and adds the cross-reference table and the trailer."""

from __future__ import annotations

import zlib


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF file of ``objects``, the first of which is its catalog (``N 0 R`` refers to the
    ``N``-th, from 1)."""
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def stream(content: bytes, dictionary: bytes = b"", compress: bool = False) -> bytes:
    """A stream object's body: ``content`` (deflated when ``compress``) with its length and
    the ``dictionary`` entries given."""
    if compress:
        content, dictionary = zlib.compress(content, 9), dictionary + b" /Filter /FlateDecode"
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (dictionary, len(content), content)


HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def text_pdf(text: str) -> bytes:
    """A one-page PDF file showing ``text`` (ASCII) in Helvetica."""
    return pdf_file(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
            b" /Resources << /Font << /F1 5 0 R >> >> >>",
            stream(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()),
            HELVETICA,
        ]
    )


def shared_stream_pdf(pages: int, content_bytes: int) -> bytes:
    """``pages`` pages that all draw one deflated content stream of ``content_bytes`` bytes of
    text operations: a few kB of file."""
    operation = b"BT /F1 12 Tf 72 720 Td (lorem) Tj ET\n"
    kids = b" ".join(b"%d 0 R" % (5 + page) for page in range(pages))
    page = b"<< /Type /Page /Parent 2 0 R /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>"
    return pdf_file(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
            stream(operation * (content_bytes // len(operation)), compress=True),
            HELVETICA,
            *[page] * pages,
        ]
    )


def nested_forms_pdf(depth: int = 7, fanout: int = 10) -> bytes:
    """One page that draws a form that draws the next ``fanout`` times, ``depth`` forms deep,
    the last showing 20 pieces of text: ``fanout ** depth`` forms to draw, from under 3 kB
    (pypdf stops at 5,000 of them, after about 25 s here)."""
    first_form, font = 5, 5 + depth + 1
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /XObject << /X %d 0 R >> >> >>" % first_form,
        stream(b"/X Do"),
    ]
    for number in range(first_form, font):
        if number < font - 1:
            content, resources = b"/X Do " * fanout, b"<< /XObject << /X %d 0 R >> >>" % (number + 1)
        else:
            content, resources = (
                b"BT /F1 12 Tf 72 720 Td " + b"(lorem ipsum) Tj " * 20 + b"ET",
                b"<< /Font << /F1 %d 0 R >> >>" % font,
            )
        objects.append(stream(content, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources " + resources))
    return pdf_file([*objects, HELVETICA])
