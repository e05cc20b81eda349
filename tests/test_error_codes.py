"""The error-code help table and its lookups (neffbench.compilerlog.codes)."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neffbench.compilerlog import codes
from neffbench.compilerlog.codes import CodeHelp, all_codes, describe, lookup, normalize

DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/"
OLDER = ("XTP002", "TEN404", "NLA001", "F134", "F139")
CODE_SHAPE = re.compile(r"NCC_[A-Z]{3,5}\d{3}|[A-Z]{1,5}\d{3,4}")


@pytest.fixture(scope="module")
def table() -> list[CodeHelp]:
    return all_codes()


def test_table_loads_every_entry_as_known_help(table):
    assert table
    assert all(isinstance(h, CodeHelp) and h.known for h in table)
    assert len({h.code for h in table}) == len(table)


def test_every_entry_has_title_advice_and_a_neuron_docs_url(table):
    for h in table:
        assert h.title.strip() and h.advice.strip() and h.url.strip(), h.code
        assert h.url.startswith(DOCS), h.code
        assert "\n" not in h.title and "\n" not in h.advice, f"{h.code}: title one line, advice one paragraph"


def test_documented_codes_link_their_own_page(table):
    # A documented code's page is named after it without the prefix: NCC_EOOM001 -> EOOM001.html.
    own = [h for h in table if h.url.endswith(f"/compiler/error-codes/{h.code.removeprefix('NCC_')}.html")]
    assert len(own) >= 55
    assert all(h.code.startswith("NCC_E") for h in own)


def test_at_least_55_ncc_codes(table):
    assert sum(h.code.startswith("NCC_") for h in table) >= 55


@pytest.mark.parametrize("code", OLDER)
def test_older_bracketed_codes_are_present_without_brackets(code):
    help_ = lookup(code)
    assert help_.known and help_.code == code


def test_keys_have_the_shapes_the_compiler_prints(table):
    bad = [h.code for h in table if not CODE_SHAPE.fullmatch(h.code)]
    assert bad == []


@pytest.mark.parametrize(
    ("pasted", "key"),
    [
        ("[NLA001]", "NLA001"),
        ("nla001", "NLA001"),
        ("  [nla001]  ", "NLA001"),
        ("NCC_EOOM001", "NCC_EOOM001"),
        ("EOOM001", "NCC_EOOM001"),
        ("eoom001\n", "NCC_EOOM001"),
        ("[F134]", "F134"),
        ("[ncc_zzz999]", "NCC_ZZZ999"),
    ],
)
def test_normalize_accepts_what_users_paste(pasted, key):
    assert normalize(pasted) == key


def test_a_bare_code_known_without_prefix_keeps_its_own_key():
    assert normalize("xtp002") == "XTP002"
    assert lookup("[XTP002]").code == "XTP002"


def test_lookup_of_a_known_code_with_brackets_and_case():
    help_ = lookup(" [ncc_eoom001] ")
    assert help_.known and help_.code == "NCC_EOOM001"
    assert help_.url.endswith("/compiler/error-codes/EOOM001.html")


def test_unknown_code_falls_back_to_a_docs_search():
    help_ = lookup("ncc_ezzz999")
    assert help_.known is False
    assert help_.code == "NCC_EZZZ999"
    assert help_.title == "Unknown error code NCC_EZZZ999"
    assert "not in the" in help_.advice and "Neuron documentation" in help_.advice
    assert help_.url == "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/search.html?q=NCC_EZZZ999"


def test_unknown_code_is_url_quoted():
    help_ = lookup("A B&C")
    assert help_.url.endswith("?q=" + quote("A B&C", safe=""))


def test_to_dict_has_every_field():
    assert lookup("NLA001").to_dict() == {
        "code": "NLA001",
        "title": lookup("NLA001").title,
        "advice": lookup("NLA001").advice,
        "url": lookup("NLA001").url,
        "known": True,
    }


def test_describe_shows_title_advice_and_url():
    help_ = lookup("NCC_EOOM001")
    text = describe("eoom001")
    lines = text.splitlines()
    assert lines[0] == f"NCC_EOOM001  {help_.title}"
    assert lines[-1] == f"docs: {help_.url}"
    assert " ".join(lines[1:-1]) == help_.advice
    assert all(len(line) <= 100 for line in lines[1:-1] if " " in line)


def test_describe_of_an_unknown_code_still_points_somewhere():
    text = describe("NCC_EZZZ999")
    assert "Unknown error code NCC_EZZZ999" in text and "search.html?q=NCC_EZZZ999" in text


def test_no_advice_just_repeats_its_title(table):
    for h in table:
        assert h.advice.strip().rstrip(".").lower() != h.title.strip().rstrip(".").lower(), h.code
        assert not h.advice.lower().startswith(h.title.lower()), h.code
        assert len(h.advice) > len(h.title), h.code


def test_table_is_read_once():
    codes._table.cache_clear()
    lookup("NLA001")
    lookup("F134")
    all_codes()
    assert codes._table.cache_info().misses == 1


@given(st.text())
def test_lookup_and_normalize_never_raise_and_always_give_a_url(text):
    key = normalize(text)
    assert isinstance(key, str)
    help_ = lookup(text)
    assert help_.url.startswith(DOCS)
    assert help_.code == key
    assert describe(text)


def test_a_lone_surrogate_does_not_break_the_search_url():
    help_ = lookup("NCC_\ud800")
    assert help_.known is False and help_.url.startswith(codes.DOCS_SEARCH_URL)


def test_the_lnc_advice_treats_inf2_and_trn1_alike():
    # neuronx-cc documents --lnc for Trn2 and later; Inf2 and Trn1 share NeuronCore-v2.
    advice = lookup("NCC_EARG001").advice
    assert "inf2 and trn1" in advice and "lnc=1" in advice
