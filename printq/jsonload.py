"""Parse a large JSON array of records piece by piece instead of as one huge tree.

Parsing a 400 MB file in one go builds millions of dicts at once (3+ GB of RAM). Instead we cut
the array's text at likely element boundaries (a comma between ``}`` and ``{``) every few MiB and
parse each piece on its own as ``[piece]``. A cut in the wrong place (inside a nested object or a
string) always leaves a piece that is not valid JSON, so it can never produce a wrong answer: the
piece is then extended to the next candidate cut. If that keeps failing, or the text does not look
like an array of objects at all, ``Unsplittable`` tells the caller to parse the whole file the
ordinary way (which also produces the precise error message for invalid JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PIECE_BYTES = 8 << 20
_MAX_EXTENSIONS = 8
_CUT = re.compile(rb"\}[ \t\r\n]*(,)[ \t\r\n]*\{")
_SPACE = b" \t\r\n"


class Unsplittable(Exception):
    """The fast piecewise parse cannot be used; parse the whole file instead."""


def iter_array_pieces(data: bytes, piece_bytes: int = PIECE_BYTES) -> Iterator[list]:
    """Yield the elements of the JSON array in ``data`` as consecutive non-empty lists.

    Raises Unsplittable (possibly after yielding some pieces) when the caller should start over
    with a whole-file parse: small inputs, non-arrays, and anything the piecewise parse rejects.
    """
    import orjson

    start = len(data) - len(data.lstrip(_SPACE))
    end = len(data.rstrip(_SPACE))
    if end - start <= piece_bytes or data[start:start + 1] != b"[" or data[end - 1:end] != b"]":
        raise Unsplittable
    pos, end = start + 1, end - 1  # inside the brackets
    while pos < end:
        search_from = pos + piece_bytes
        for _ in range(_MAX_EXTENSIONS):
            match = _CUT.search(data, search_from, end) if search_from < end else None
            cut = match.start(1) if match else end
            try:
                elements = orjson.loads(b"[" + data[pos:cut] + b"]")
            except orjson.JSONDecodeError:
                if match is None:
                    raise Unsplittable from None
                search_from = match.end(1)  # cut inside something: try the next boundary
                continue
            if not elements:  # "[ ]" from a stray comma: invalid as a whole, let the full parse say so
                raise Unsplittable
            yield elements
            pos = cut + 1
            break
        else:
            raise Unsplittable
