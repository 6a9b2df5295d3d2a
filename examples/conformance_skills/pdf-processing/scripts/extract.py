"""Print the text of a PDF: python extract.py FILE."""

import sys

from pypdf import PdfReader

for page in PdfReader(sys.argv[1]).pages:
    print(page.extract_text())
