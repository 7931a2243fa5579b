"""The corrections feed's entry titles are sentences in both languages, never codes
(issue 34, item 4: "Blocker codes on public evidence and system pages, and in the Atom
entry titles, are the sentences ... in both languages")."""

from mica.exports.documents import atom_entries

DOCUMENT = {
    "corrections": [
        {"id": 7, "section_id": "M-3.2", "decided_on": "2026-11-02", "text_en": "", "text_ko": ""}
    ],
    "challenge_decisions": [
        {
            "challenge": 12,
            "section_id": "M-3.2",
            "action": "accept",
            "to_state": "accepted",
            "role": "method-lead",
            "reason": "The figure was recounted.",
            "at": "2026-11-02T09:00:00+00:00",
        }
    ],
}


def test_a_decision_is_titled_with_its_outcome_and_role_in_both_languages():
    correction, decision = (entry["title"] for entry in atom_entries(DOCUMENT, "https://x"))
    assert correction == "Correction of M-3.2 / M-3.2 정정"
    english, korean = decision.split(" / ")
    assert english == "Challenge #12 on M-3.2: Accepted and corrected (method lead)"
    assert korean.startswith("M-3.2에 대한 이의 제기 #12: ")
    for code in ("accept", "method-lead"):
        assert code not in decision.replace("M-3.2", "")
