"""Turn the source data sets into the records `foxnose-knowledge` ships in this folder.

    python specs/foxnose-knowledge/data/prepare.py SOURCE_FOLDER

SOURCE_FOLDER holds `peps.jsonl.gz` (the PEPs as one JSON object per line: number, title,
authors, status, type, topic, created, python_version, requires, replaces, superseded_by,
sections, abstract, text) and `countries.jsonl.gz` (the mledoze/countries records). Writes, next
to this script, `peps.jsonl.gz`, `sections.jsonl.gz` and `countries.jsonl.gz`: one record per
line, shaped as the resources in `../peps.yaml`, `../sections.yaml` and `../countries.yaml`
declare them. The output is deterministic (sorted by key, gzip without a timestamp), so running
it again on the same input changes no byte. See README.md for what each step does and why.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# ISO 639-2/3 codes of the mledoze translations -> ISO 639-1, which every one of them has.
LOCALES = {
    "ara": "ar", "bre": "br", "ces": "cs", "deu": "de", "est": "et", "fin": "fi", "fra": "fr",
    "hrv": "hr", "hun": "hu", "ita": "it", "jpn": "ja", "kor": "ko", "nld": "nl", "per": "fa",
    "pol": "pl", "por": "pt", "rus": "ru", "slk": "sk", "spa": "es", "srp": "sr", "swe": "sv",
    "tur": "tr", "urd": "ur", "zho": "zh",
}  # fmt: skip
# A reST section adornment: one punctuation character repeated, nothing else on the line.
ADORNMENT = re.compile(r"""^([=\-~^"'`#*+_.:<>!$%&,;?@\\|/])\1{2,}\s*$""")


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """Gzipped JSON lines, written to a temporary file and renamed: a killed run leaves the
    previous file whole. mtime=0 keeps the bytes reproducible."""
    buffer = io.BytesIO()
    count = 0
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            count += 1
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(buffer.getvalue())
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return count


def _present(record: dict[str, Any]) -> dict[str, Any]:
    """Drop absent values (None, "") so that optional fields are left out, never null."""
    return {name: value for name, value in record.items() if value is not None and value != ""}


# --- PEPs -------------------------------------------------------------------------------------


def pep_record(raw: dict[str, Any]) -> dict[str, Any]:
    number = int(raw["number"])
    return _present(
        {
            "number": number,
            "title": raw["title"],
            "url": f"https://peps.python.org/pep-{number:04d}/",
            "authors": list(raw["authors"]),
            "status": raw["status"],
            "type": raw["type"],
            # "Governance, Packaging": a PEP may belong to several topics.
            "topic": _split_list(raw.get("topic")),
            "created": raw["created"],
            # "2.6, 3.0": some PEPs target several versions; each is its own element.
            "python_version": _split_list(raw.get("python_version")),
            "requires": list(raw["requires"]),
            "replaces": list(raw["replaces"]),
            "superseded_by": list(raw["superseded_by"]),
            "abstract": raw.get("abstract") or None,
            "body": raw["text"],
        }
    )


def _split_list(value: str | None) -> list[str] | None:
    if not value:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def headings(lines: list[str]) -> list[tuple[int, int, str, str]]:
    """Every reST section title of a document: (first line, first body line, title, style).
    Style is the adornment character, prefixed with "o" when the title also has an overline;
    titles in indented (literal) blocks are not titles, so only column-0 lines count."""
    found = []
    i = 0
    while i < len(lines) - 1:
        line, below = lines[i], lines[i + 1]
        if (
            ADORNMENT.match(line)
            and i + 2 < len(lines)
            and below.strip()
            and not ADORNMENT.match(below)
            and ADORNMENT.match(lines[i + 2])
            and lines[i + 2][0] == line[0]
        ):
            found.append((i, i + 3, below.strip(), "o" + line[0]))
            i += 3
        elif (
            line.strip()
            and not line[0].isspace()
            and not ADORNMENT.match(line)
            and ADORNMENT.match(below)
            and len(below.rstrip()) >= len(line.rstrip())
            and (i == 0 or not lines[i - 1].strip())
        ):
            found.append((i, i + 2, line.strip(), below[0]))
            i += 2
        else:
            i += 1
    return found


def split_sections(pep: dict[str, Any]) -> list[dict[str, Any]]:
    """A PEP's body cut at its top-level headings. In reST the first adornment style met is the
    top level, so that is where the cuts go; deeper headings stay inside their section's body.
    Text before the first heading (a `.. rejected::` note, a `.. highlight::` directive) opens
    the first section's body, so the sections together hold the whole body. A PEP without
    headings is one section titled with the PEP's title."""
    number = pep["number"]
    lines = pep["body"].split("\n")
    found = headings(lines)
    top = [h for h in found if h[3] == found[0][3]] if found else []
    if not top:
        return [_section(number, 1, pep["title"], pep["body"])]
    sections = []
    for index, (start, body_start, title, _) in enumerate(top):
        end = top[index + 1][0] if index + 1 < len(top) else len(lines)
        body = "\n".join(lines[body_start:end])
        if index == 0:
            body = "\n".join(lines[:start]).strip() + "\n\n" + body
        sections.append(_section(number, index + 1, title, body))
    return sections


def _section(pep: int, index: int, title: str, body: str) -> dict[str, Any]:
    return _present(
        {"section_id": f"{pep}-{index}", "pep": pep, "index": index, "title": title, "body": body.strip()}
    )


# --- Countries --------------------------------------------------------------------------------


def country_record(raw: dict[str, Any]) -> dict[str, Any]:
    translations = raw["translations"]
    name = {"en": raw["name"]["common"]}
    official = {"en": raw["name"]["official"]}
    for code, names in sorted(translations.items(), key=lambda item: LOCALES[item[0]]):
        name[LOCALES[code]] = names["common"]
        official[LOCALES[code]] = names["official"]
    demonym = raw.get("demonyms", {}).get("eng")
    return _present(
        {
            "cca3": raw["cca3"],
            "cca2": raw["cca2"],
            "ccn3": raw.get("ccn3"),
            "cioc": raw.get("cioc"),
            "name": name,
            "official_name": official,
            "alt_spellings": list(raw.get("altSpellings", [])),
            "region": raw["region"],
            "subregion": raw.get("subregion"),
            "un_regional_group": raw.get("unRegionalGroup"),
            "independent": raw.get("independent"),
            "un_member": raw["unMember"],
            "landlocked": raw["landlocked"],
            # -1 is the source's "unknown" (Svalbard and Jan Mayen): leave the field out.
            "area": raw["area"] if raw["area"] >= 0 else None,
            "capital": list(raw["capital"]) or None,
            "borders": list(raw["borders"]),
            "currencies": [
                _present({"code": code, "name": value.get("name"), "symbol": value.get("symbol")})
                for code, value in sorted(raw["currencies"].items())
            ],
            "languages": sorted(raw["languages"].values()),
            "demonym": _present({"female": demonym.get("f"), "male": demonym.get("m")}) if demonym else None,
            "latlng": {"lat": float(raw["latlng"][0]), "lng": float(raw["latlng"][1])},
            "tld": list(raw.get("tld", [])),
            "flag": raw.get("flag"),
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder holding peps.jsonl.gz and countries.jsonl.gz")
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (default: this folder)")
    args = parser.parse_args(argv)
    for name in ("peps.jsonl.gz", "countries.jsonl.gz"):
        if not (args.source / name).is_file():
            print(f"error: {args.source / name}: no such file", file=sys.stderr)
            return 2
    peps = sorted((pep_record(raw) for raw in read_jsonl(args.source / "peps.jsonl.gz")), key=_number)
    sections = [section for pep in peps for section in split_sections(pep)]
    countries = sorted(
        (country_record(raw) for raw in read_jsonl(args.source / "countries.jsonl.gz")),
        key=lambda record: record["cca3"],
    )
    _check_references(peps, countries)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, records in (("peps", peps), ("sections", sections), ("countries", countries)):
        count = write_jsonl(args.out / f"{name}.jsonl.gz", records)
        print(f"{name}: {count} records -> {args.out / f'{name}.jsonl.gz'}")
    return 0


def _number(record: dict[str, Any]) -> int:
    return record["number"]


def _check_references(peps: list[dict[str, Any]], countries: list[dict[str, Any]]) -> None:
    """Every reference names a record that ships: a dangling key would be a broken populate."""
    numbers = {pep["number"] for pep in peps}
    for pep in peps:
        for field in ("requires", "replaces", "superseded_by"):
            missing = [n for n in pep.get(field, []) if n not in numbers]
            if missing:
                raise SystemExit(f"error: PEP {pep['number']} {field} names unknown PEPs {missing}")
    codes = {country["cca3"] for country in countries}
    for country in countries:
        missing = [code for code in country.get("borders", []) if code not in codes]
        if missing:
            raise SystemExit(f"error: {country['cca3']} borders unknown countries {missing}")


if __name__ == "__main__":
    sys.exit(main())
