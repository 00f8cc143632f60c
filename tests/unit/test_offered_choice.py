"""What a request that only picks a number asks for, from the options the assistant offered."""

from __future__ import annotations

from yzos_jobs.importers.offered_choice import chosen_option

OFFER = """Done: the schema is in place.

1. **Migrated** the users table
2. **Added** the seed data

Next we could:
1. **Implement the lesson API** - templates and search
2. **Build the front end**
3. Add CI

```
1. not an option
```
Which first?"""


def test_the_number_picks_from_the_last_list_offered() -> None:
    assert chosen_option("1", OFFER) == "Implement the lesson API - templates and search"
    assert chosen_option("2.", OFFER) == "Build the front end"
    assert chosen_option("option 3", OFFER) == "Add CI"


def test_a_request_that_says_more_than_a_number_picks_nothing() -> None:
    assert chosen_option("1 but skip the search", OFFER) is None
    assert chosen_option("4", OFFER) is None
    assert chosen_option("1", None) is None
    assert chosen_option("1", "Shall I go on?") is None


def test_an_offer_written_as_headings_or_questions() -> None:
    said = "### Option 1: Keep the stack\n### Option 2: Start again from main\nWhich?"
    assert chosen_option("2", said) == "Start again from main"
    asked = "Would you like me to:\n1. **Fix the redaction bug** immediately?\n2. Set up pytest?"
    assert chosen_option("1", asked) == "Fix the redaction bug immediately"


def test_a_number_in_the_text_that_continues_no_list_is_no_option() -> None:
    said = "The build ran at\n10: 30 it failed\n1. Retry the build\n3: 15 later"
    assert chosen_option("3", said) is None
    assert chosen_option("1", said) == "Retry the build"
