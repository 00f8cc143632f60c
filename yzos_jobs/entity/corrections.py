"""What `yzos-jobs correct` does: a user's correction of an entity or a candidate.

Each correction writes the entity (or candidate), an `entity_overrides` row with `set_by='user'`
and a decision row, in one transaction. A user's word is final: the purge never re-judges an
entity a user corrected, and later sightings never undo it (an archived entity stays archived; a
renamed, re-kinded or merged-away name keeps resolving to where the user put it). Terminal
states are irreversible for the jobs; only a correction reverses one (`--restore`, `--requeue`).

The most recent corrections are also the judge's worked examples (`correction_examples`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import run_in_transaction
from yzos_jobs.db.decision_rows import DecisionRow, recent_user_corrections, record_decisions
from yzos_jobs.db.entities import USER, EntityKey, EntityRow
from yzos_jobs.db.queue import requeue_candidate
from yzos_jobs.db.verdict_cache import forget_verdicts
from yzos_jobs.entity.merge import merge_entities, remember_old_key, scope_for
from yzos_jobs.entity.policy import candidate_input, display_name, normalize_name
from yzos_jobs.entity.refs import CandidateTarget, EntityTarget, resolve, resolve_entity
from yzos_jobs.entity.trail import verdict_fields
from yzos_jobs.inference.contract import ClassifyInput, ClassifyVerdict, CorrectionExample

Action = Literal["not_entity", "kind", "rename", "merge_into", "restore", "requeue"]
CacheKeys = Callable[[Sequence[ClassifyInput]], list[str]]


class CorrectionRefused(Exception):
    """A correction that does not apply to what the reference names; one line for the user."""


@dataclass(frozen=True)
class Corrected:
    action: Action
    outcome: str
    entity_id: int | None
    candidate_id: int | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "outcome": self.outcome,
            "entity": f"e:{self.entity_id}" if self.entity_id is not None else None,
            "candidate": f"c:{self.candidate_id}" if self.candidate_id is not None else None,
            "message": self.message,
        }


# A correction's reason is shown beside every decision it made (`explain`) and to the judge as
# a worked example's rationale: a few sentences, not a document.
REASON_CHARS = 2000


def correct(
    sessions: sessionmaker[Session],
    ref: str,
    action: Action,
    value: str | None = None,
    reason: str | None = None,
    cache_keys: CacheKeys | None = None,
) -> Corrected:
    """Apply one correction in one transaction. `value`: the kind, the new name or the entity to
    merge into. `cache_keys`: how the judge keys its cache (a requeued candidate's cached
    verdicts are dropped, so it is judged afresh). A reason past REASON_CHARS is kept cut."""
    if reason is not None and len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 1].rstrip() + "…"

    def work(session: Session) -> Corrected:
        now = utcnow()
        target = resolve(session, ref)
        if action == "requeue":
            if not isinstance(target, CandidateTarget):
                raise CorrectionRefused(f"--requeue takes a candidate (c:ID), not {target.label}")
            return _requeue(session, target, reason, cache_keys, now)
        if isinstance(target, EntityTarget):
            entity_id = target.entity.id
        elif target.candidate.entity_id is not None:
            entity_id = target.candidate.entity_id  # a candidate stands for its entity
        else:
            raise CorrectionRefused(
                f"{target.label} is {target.candidate.status} and names no entity; "
                "--requeue it to have it judged again"
            )
        rows = entity_db.entity_rows(session, [entity_id], lock=True)
        if not rows:
            raise CorrectionRefused(f"e:{entity_id} is gone (merged meanwhile?)")
        return _correct_entity(session, rows[0], action, value, reason, now)

    return run_in_transaction(sessions, work)


def _subject(entity: EntityRow) -> dict[str, Any]:
    """What the judge saw of the entity: the subject of a worked example."""
    return {
        "raw_text": entity.display_name,
        "suggested_kind": entity.kind,
        "surrounding_text": entity.summary,
    }


def _record(
    session: Session,
    action: Action,
    outcome: str,
    now: datetime,
    verdict: dict[str, Any],
    *,
    entity_id: int | None = None,
    candidate_id: int | None = None,
    subject: dict[str, Any] | None = None,
    detail: str | None = None,
    merged_from: int | None = None,
) -> None:
    body = {**verdict, "correction": action}
    if merged_from is not None:  # where references to the entity merged away are pointed
        body["merged_from"] = merged_from
    if subject is not None:
        body["subject"] = subject
    if detail is not None:
        body["detail"] = detail
    row = DecisionRow(
        call_site="user",
        source="user",
        outcome=outcome,
        candidate_id=candidate_id,
        entity_id=entity_id,
        verdict=body,
    )
    record_decisions(session, [row], now)


def _correct_entity(
    session: Session,
    entity: EntityRow,
    action: Action,
    value: str | None,
    reason: str | None,
    now: datetime,
) -> Corrected:
    if action == "not_entity":
        entity_db.correct_entity(session, entity.id, now, status="archived")
        why = reason or "The user says this is not an entity."
        entity_db.set_user_override(session, entity.id, "archived", why, now)
        verdict = verdict_fields(False, None, None, why, 1.0)
        _record(
            session, action, "archived", now, verdict, entity_id=entity.id, subject=_subject(entity)
        )
        return Corrected(
            action, "archived", entity.id, None, f"e:{entity.id} archived: not an entity"
        )
    if action == "restore":
        entity_db.correct_entity(session, entity.id, now, status="active")
        why = reason or f"The user says this is a real {entity.kind}."
        entity_db.set_user_override(session, entity.id, "active", why, now)
        outcome = "restored" if entity.status == "archived" else "confirmed"
        verdict = verdict_fields(True, entity.kind, entity.display_name, why, 1.0)
        _record(
            session, action, outcome, now, verdict, entity_id=entity.id, subject=_subject(entity)
        )
        return Corrected(action, outcome, entity.id, None, f"e:{entity.id} {outcome}: active")
    if action == "kind":
        assert value is not None
        scope = scope_for(value, entity.project_key) or _scope_before(entity, value)
        new_key = (value, entity.normalized_name, scope)
        return _move(session, entity, action, new_key, entity.display_name, reason, now)
    if action == "rename":
        shown = display_name(value)
        if not shown or not normalize_name(shown):
            raise CorrectionRefused("--rename needs a name with at least one visible character")
        new_key = (entity.kind, normalize_name(shown), entity.project_key)
        return _move(session, entity, action, new_key, shown, reason, now)
    assert action == "merge_into" and value is not None
    target = resolve_entity(session, value)
    if target.id == entity.id:
        raise CorrectionRefused(f"e:{entity.id} cannot be merged into itself")
    return _merge(session, entity, target, action, reason, now)


def _scope_before(entity: EntityRow, kind: str) -> str:
    """The repository of a person (which no repository scopes) made a project or a task: the
    one it was seen in, which it keeps as a person (a project made a person and back is of its
    repository again). An unscoped project or task stays so."""
    if kind not in ("project", "task") or entity.kind in ("project", "task"):
        return ""
    return entity_db.project_key(entity.project_path)


def _move(
    session: Session,
    entity: EntityRow,
    action: Action,
    new_key: EntityKey,
    shown: str,
    reason: str | None,
    now: datetime,
) -> Corrected:
    """--kind / --rename: the entity takes the new key (its old one resolving to it), or, when
    another entity already has that key, merges into it."""
    found = entity_db.find_entities(session, [new_key]).get(new_key)
    if found is not None and found.id != entity.id:
        target = entity_db.entity_rows(session, [found.id], lock=True)[0]
        return _merge(session, entity, target, action, reason, now)
    kind, normalized, scope = new_key
    # A new name is no verdict on whether it is real: an archived entity stays archived
    # (`--restore` brings it back). A kind says it is an entity of that kind.
    archived = action == "rename" and entity.status == "archived"
    released = entity_db.correct_entity(
        session,
        entity.id,
        now,
        kind=kind,
        normalized_name=normalized,
        display_name=shown,
        project_key=scope,
        status=entity.status if archived else "active",
    )
    what = f"a {kind} named {shown!r}" if action == "rename" else f"a {kind}"
    if archived:
        why = reason or f"The user names it {shown!r}; it is still not an entity."
    else:
        why = reason or f"The user says this is {what}."
        entity_db.set_user_override(session, entity.id, "active", why, now)
    remember_old_key(session, entity.id, entity.key, new_key, USER, now)
    if action == "kind" and entity.status == "archived":
        outcome = "restored" if kind == entity.kind else "rekinded"
    elif action == "kind":
        outcome = "confirmed" if kind == entity.kind else "rekinded"
    else:
        outcome = "renamed"
    verdict = (
        verdict_fields(False, None, None, why, 1.0)
        if archived
        else verdict_fields(True, kind, shown, why, 1.0)
    )
    _record(session, action, outcome, now, verdict, entity_id=entity.id, subject=_subject(entity))
    said = f"e:{entity.id} {outcome}: {kind} {shown!r}"
    if archived:
        said += " (archived; --restore brings it back)"
    elif entity.status == "archived" and outcome == "rekinded":
        said += " (archived before: active again)"
    if released:
        said += f"; its {released} task{'s' if released != 1 else ''} no longer name a project"
    if kind in ("project", "task") and kind != entity.kind and scope:
        # a project's repository's tasks wait for a project (let go when it was made another
        # kind); a task made one again waits for its repository's project
        entity_db.link_tasks_to_projects(session, {scope})
        if kind == "project" and (held := entity_db.tasks_held(session, entity.id)):
            said += f"; {held} task{'s' if held != 1 else ''} of its repository name it"
    return Corrected(action, outcome, entity.id, None, said)


def _merge(
    session: Session,
    source: EntityRow,
    target: EntityRow,
    action: Action,
    reason: str | None,
    now: datetime,
) -> Corrected:
    """The source becomes part of the target; its name resolves to the target from now on. A
    user who merges into an active entity says it is real: the target is pinned active."""
    merge_entities(session, source, target, USER, now)
    active = target.status == "active"
    why = reason or (
        f"The user says this is the {target.kind} {target.display_name!r}."
        if active
        else f"The user says this is {target.display_name!r}, which is not an entity."
    )
    if active:  # the user vouches for the target: its verdict is the user's now
        entity_db.correct_entity(session, target.id, now)
        entity_db.set_user_override(session, target.id, "active", why, now)
    verdict = verdict_fields(
        active, target.kind if active else None, target.display_name if active else None, why, 1.0
    )
    detail = f"e:{source.id} {source.kind} {source.display_name!r} merged into e:{target.id}"
    if active and source.status == "archived":
        detail += f" (e:{source.id} was archived; what it held is active in e:{target.id})"
    if not active:
        detail += f" (archived: {target.display_name!r} is not an entity)"
    _record(
        session,
        action,
        "merged",
        now,
        verdict,
        entity_id=target.id,
        subject=_subject(source),
        detail=detail,
        merged_from=source.id,
    )
    return Corrected(action, "merged", target.id, None, detail)


def _requeue(
    session: Session,
    target: CandidateTarget,
    reason: str | None,
    cache_keys: CacheKeys | None,
    now: datetime,
) -> Corrected:
    c = target.candidate
    if not requeue_candidate(session, c.id, now):
        raise CorrectionRefused(f"c:{c.id} is {c.status}; only a rejected candidate is requeued")
    if cache_keys is not None:
        forget_verdicts(session, cache_keys([candidate_input(c)]))
    why = reason or "The user asks for a new judgement."
    verdict = {"reason": why, "was": {"status": c.status, "reject_reason": c.reject_reason}}
    _record(session, "requeue", "requeued", now, verdict, candidate_id=c.id, entity_id=c.entity_id)
    return Corrected("requeue", "requeued", c.entity_id, c.id, f"c:{c.id} requeued: pending")


_VERDICT_FIELDS = tuple(ClassifyVerdict.model_fields)


def correction_lookup(
    sessions: sessionmaker[Session], limit: int
) -> Callable[[], list[CorrectionExample]] | None:
    """The judge's source of worked examples: one small indexed query per classify_many batch,
    so a new correction counts from the next batch on. None when no example is wanted."""
    if limit <= 0:
        return None

    def lookup() -> list[CorrectionExample]:
        with sessions() as session:
            return correction_examples(session, limit)

    return lookup


def correction_examples(session: Session, limit: int) -> list[CorrectionExample]:
    """The most recent user corrections that say what something is, oldest first (the newest
    closest to the candidate), as the judge's worked examples."""
    examples = []
    for body in reversed(recent_user_corrections(session, limit)):
        subject = body.get("subject")
        if not isinstance(subject, dict) or not isinstance(subject.get("raw_text"), str):
            continue
        try:
            verdict = ClassifyVerdict.model_validate({k: body.get(k) for k in _VERDICT_FIELDS})
        except ValidationError:
            continue  # a row written by another version; it teaches nothing reliable
        kind, context = subject.get("suggested_kind"), subject.get("surrounding_text")
        examples.append(
            CorrectionExample(
                raw_text=subject["raw_text"],
                suggested_kind=kind if isinstance(kind, str) else None,
                surrounding_text=context if isinstance(context, str) else None,
                verdict=verdict,
            )
        )
    return examples
