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


def test_the_number_picks_from_the_list_that_ends_the_reply() -> None:
    assert chosen_option("1", OFFER) == "Implement the lesson API - templates and search"
    assert chosen_option("2.", OFFER) == "Build the front end"
    assert chosen_option("option 3", OFFER) == "Add CI"


def test_a_request_that_says_more_than_a_number_picks_nothing() -> None:
    assert chosen_option("1 but skip the search", OFFER) is None
    assert chosen_option("no 2", OFFER) is None
    assert chosen_option("4", OFFER) is None
    assert chosen_option("1", None) is None
    assert chosen_option("1", "Shall I go on?") is None


def test_an_offer_written_as_headings_or_questions() -> None:
    said = "### Option 1: Keep the stack\n### Option 2 — Start again from main\nWhich?"
    assert chosen_option("2", said) == "Start again from main"
    asked = "Would you like me to:\n1. **Fix the redaction bug** immediately?\n2. Set up pytest?"
    assert chosen_option("1", asked) == "Fix the redaction bug immediately"


def test_a_list_numbered_inside_an_item_is_its_detail() -> None:
    said = (
        "1. **Backend**\n   1. Add API\n   2. Add DB\n"
        "2. **Frontend**\n   1. Build UI\n   2. Style it\nWhich part first?"
    )
    assert [chosen_option(n, said) for n in ("1", "2")] == ["Backend", "Frontend"]


def test_a_reply_that_goes_on_past_its_list_offers_nothing() -> None:
    said = (
        "I made these changes:\n1. Added retry on timeout\n2. Fixed the pool leak\n\n"
        "The retries back off exponentially.\nThe pool now closes idle connections.\n"
        "Both are covered by tests.\nHow many retries should it allow? (default 3)"
    )
    assert chosen_option("2", said) is None


def test_times_and_decimals_are_no_items() -> None:
    said = "1. Retry the build\nThe cron fires at\n2:15 every night"
    assert chosen_option("2", said) is None
    said = "1. Implement API\n2. Build UI\n\n1.5x faster after the change. Which one?"
    assert chosen_option("2", said) == "Build UI"


def test_a_code_block_is_closed_only_by_its_own_fence() -> None:
    said = "```\n~~~ not a fence\n1. in code\n```\n1. Real option\n2. Other"
    assert chosen_option("1", said) == "Real option"


def test_a_short_reply_naming_one_option_picks_it() -> None:
    assert chosen_option("Let's do option 1", OFFER) == (
        "Implement the lesson API - templates and search"
    )
    assert chosen_option("Option 2 of course", OFFER) == "Build the front end"
    assert chosen_option("okay try again option 3", OFFER) == "Add CI"


def test_a_reply_that_names_more_than_one_option_or_says_more_picks_nothing() -> None:
    assert chosen_option("option 1 or option 2, which is faster?", OFFER) is None
    assert chosen_option("option 1 but with 2 workers", OFFER) is None
    assert (
        chosen_option("go with option 2 but keep the old API around for the mobile app", OFFER)
        is None
    )
    assert chosen_option("the options2 folder", OFFER) is None
