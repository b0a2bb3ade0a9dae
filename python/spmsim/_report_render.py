"""Report documents as a list of blocks, rendered to one self-contained HTML
page (inline CSS, figures as base64 data URIs, no script, nothing fetched)
and to Markdown (figures as links into figures/).

    blocks: heading | paragraph | list | table | figure | code
    parse_markdown(text) -> blocks        (the subset spmsim's reports use)
    to_html(title, blocks) / to_markdown(blocks, base_dir)
"""

from __future__ import annotations

import base64
import html
import math
import os
import re
from typing import Any, Iterable


class ReportError(ValueError):
    """Bad input to a report: a folder that holds no results, a malformed file."""


def write(path: str, text: str) -> None:
    """Write `text` to `path` whole: a reader (a browser refreshing the page)
    sees the old page or the new one."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)

NUMERIC = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*%?$")


# Text blocks are Markdown (`code`, **bold**); table cells are plain text.
def heading(text: str, level: int = 2) -> dict:
    return {"kind": "heading", "level": level, "text": text, "markdown": True}


def paragraph(text: str) -> dict:
    return {"kind": "paragraph", "text": text, "markdown": True}


def bullets(items: Iterable[str]) -> dict:
    return {"kind": "list", "items": list(items), "markdown": True}


def table(columns: list[str], rows: list[list[Any]], note: str | None = None) -> dict:
    return {"kind": "table", "columns": [str(c) for c in columns], "rows": [[fmt(v) for v in r] for r in rows],
            "note": note}


def figure(caption: str, paths: list[str], name: str, html_id: str | None = None) -> dict:
    """A plot; in HTML `<figure id="fig-NAME">`, or `html_id` when given."""
    png = next(p for p in paths if p.endswith(".png"))
    svg = next((p for p in paths if p.endswith(".svg")), None)
    return {"kind": "figure", "caption": caption, "png": png, "svg": svg, "name": name, "id": html_id}


def fmt(v: Any) -> str:
    """A table cell: integers as they are, floats to 4 significant digits
    (fixed point where that is short), missing values as an empty cell."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if hasattr(v, "item") and not isinstance(v, str):
        try:
            v = v.item()
        except (TypeError, ValueError):
            pass
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        a = abs(v)
        if 1e-3 <= a < 1e6:
            digits = max(0, 3 - int(math.floor(math.log10(a))))
            return f"{v:.{digits}f}"
        return f"{v:.4g}"
    return str(v)


# --------------------------------------------------------------------------
# Markdown in


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def parse_markdown(text: str) -> list[dict]:
    """Headings, pipe tables, `- ` lists, fenced code and paragraphs."""
    lines = text.splitlines()
    blocks: list[dict] = []
    i = 0
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(paragraph(" ".join(s.strip() for s in para)))
            para.clear()

    sep = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            flush()
            blocks.append(heading(m.group(2), len(m.group(1))))
            i += 1
        elif line.strip().startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            blocks.append({"kind": "code", "text": "\n".join(lines[i + 1:j])})
            i = j + 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and sep.match(lines[i + 1]):
            flush()
            cols = _split_row(line)
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append(_split_row(lines[j]))
                j += 1
            blocks.append({"kind": "table", "columns": cols, "rows": rows, "note": None, "markdown": True})
            i = j
        elif re.match(r"^\s*[-*]\s+", line):
            flush()
            items = []
            while i < len(lines) and lines[i].strip():
                if re.match(r"^\s*[-*]\s+", lines[i]):
                    items.append(re.sub(r"^\s*[-*]\s+", "", lines[i]))
                else:
                    items[-1] += " " + lines[i].strip()
                i += 1
            blocks.append({"kind": "list", "items": items, "markdown": True})
        elif not line.strip():
            flush()
            i += 1
        else:
            para.append(line)
            i += 1
    flush()
    for b in blocks:  # text that came from Markdown keeps its inline marks
        b.setdefault("markdown", True)
    return blocks


# --------------------------------------------------------------------------
# HTML out

CSS = """
:root { --fg: #1d2125; --muted: #5b6570; --line: #d7dce1; --head: #f1f3f5; --accent: #2f5f98; }
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: var(--fg);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 17px; margin: 22px 0 6px; }
h4, h5, h6 { font-size: 15px; margin: 18px 0 6px; }
p, li { max-width: 72em; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; background: #f3f4f6;
       padding: 1px 4px; border-radius: 3px; }
pre { background: #f3f4f6; padding: 10px; overflow-x: auto; }
.table-wrap { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 3px 9px; text-align: left; vertical-align: top; white-space: nowrap; }
td.long { white-space: normal; min-width: 28em; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fafbfc; }
.note { color: var(--muted); font-size: 13px; }
figure { margin: 14px 0 22px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); background: #fff; }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 4px; }
nav.toc { font-size: 14px; background: #f7f8fa; border: 1px solid var(--line); padding: 8px 14px; margin: 12px 0; }
nav.toc ul { margin: 4px 0; padding-left: 18px; }
"""


LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def inline(text: str, markdown: bool = True) -> str:
    """Escape, then (for Markdown text) `code`, **bold**, *emphasis* and
    [links](href)."""
    out = html.escape(text, quote=False)
    if not markdown:
        return out
    parts = re.split(r"(`[^`]+`)", out)
    for k, part in enumerate(parts):
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            parts[k] = f"<code>{part[1:-1]}</code>"
        else:
            part = LINK.sub(lambda m: f'<a href="{m.group(2).replace(chr(34), "&quot;")}">{m.group(1)}</a>', part)
            part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
            parts[k] = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", part)
    return "".join(parts)


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "section"


def data_uri(path: str) -> str:
    mime = "image/svg+xml" if path.endswith(".svg") else "image/png"
    with open(path, "rb") as f:
        return f"data:{mime};base64," + base64.b64encode(f.read()).decode("ascii")


def to_html(title: str, blocks: list[dict], toc: bool = True) -> str:
    body: list[str] = []
    ids: dict[str, int] = {}
    heads = []
    for b in blocks:
        md = b.get("markdown", False)
        k = b["kind"]
        if k == "heading":
            base = slug(b["text"])
            n = ids.get(base, 0)
            ids[base] = n + 1
            hid = base if n == 0 else f"{base}-{n}"
            if b["level"] > 1:
                heads.append((b["level"], hid, b["text"]))
            body.append(f'<h{b["level"]} id="{hid}">{inline(b["text"], md)}</h{b["level"]}>')
        elif k == "paragraph":
            body.append(f"<p>{inline(b['text'], md)}</p>")
        elif k == "list":
            body.append("<ul>" + "".join(f"<li>{inline(t, md)}</li>" for t in b["items"]) + "</ul>")
        elif k == "code":
            body.append(f"<pre><code>{html.escape(b['text'])}</code></pre>")
        elif k == "table":
            head = "".join(f"<th>{inline(c, md)}</th>" for c in b["columns"])
            rows = []
            for r in b["rows"]:
                cells = []
                for c in r:
                    cls = ' class="num"' if NUMERIC.match(re.sub(r"[*`]", "", c or "")) else (
                        ' class="long"' if len(c or "") > 60 else "")
                    cells.append(f"<td{cls}>{inline(c, md)}</td>")
                rows.append("<tr>" + "".join(cells) + "</tr>")
            body.append(f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
                        "</tbody></table></div>")
            if b.get("note"):
                body.append(f'<p class="note">{inline(b["note"])}</p>')
        elif k == "figure":
            src = data_uri(b["svg"] or b["png"])
            fid = b.get("id") or f'fig-{b["name"]}'
            body.append(f'<figure id="{html.escape(fid)}"><img class="plot" alt="{html.escape(b["caption"])}" '
                        f'src="{src}"><figcaption>{inline(b["caption"])}</figcaption></figure>')
        else:
            raise ValueError(f"unknown block kind {k!r}")
    nav = ""
    if toc and len(heads) > 2:
        top = min(level for level, _, _ in heads)
        items = "".join(f'<li><a href="#{hid}">{inline(text)}</a></li>' for level, hid, text in heads if level == top)
        nav = f'<nav class="toc"><strong>Contents</strong><ul>{items}</ul></nav>'
    # The title heading comes first, then the contents.
    if body and body[0].startswith("<h1"):
        body.insert(1, nav)
    else:
        body.insert(0, nav)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


# --------------------------------------------------------------------------
# Markdown out


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[dict], base_dir: str) -> str:
    out: list[str] = []
    for b in blocks:
        k = b["kind"]
        if k == "heading":
            out.append("#" * b["level"] + " " + b["text"])
        elif k == "paragraph":
            out.append(b["text"])
        elif k == "list":
            out.append("\n".join("- " + t for t in b["items"]))
        elif k == "code":
            out.append("```\n" + b["text"] + "\n```")
        elif k == "table":
            lines = ["| " + " | ".join(_md_cell(c) for c in b["columns"]) + " |",
                     "|" + "---|" * len(b["columns"])]
            lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in b["rows"]]
            out.append("\n".join(lines))
            if b.get("note"):
                out.append(b["note"])
        elif k == "figure":
            png = os.path.relpath(b["png"], base_dir).replace(os.sep, "/")
            line = f"![{b['caption']}]({png})"
            if b["svg"]:
                line += f"\n\n{b['caption']} ([SVG]({os.path.relpath(b['svg'], base_dir).replace(os.sep, '/')}))"
            out.append(line)
    return "\n\n".join(out) + "\n"
