"""Which cases of a file run: ``--run REGEX`` on ids, ``--tag`` (any of), ``--exclude-tag``
and the project's ``exclude_tags`` (left out unless ``--tag`` names them), all ANDed."""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.errors import ConfigError
from agentcli.eval.cases.load import CaseInfo
from agentcli.patterns import Pattern

__all__ = ["NothingSelected", "Selection"]


class NothingSelected(ConfigError):
    """No case of the file passes the selection (a suite's run skips such a file)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The filters of one run; ``keeps`` decides a case from its info alone."""

    run_filter: Pattern | None = None
    run_text: str | None = None
    tags: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()  # --exclude-tag, and the project's not --tag-ged

    @classmethod
    def of(
        cls,
        run_filter: Pattern | None,
        run_text: str | None,
        tags: list[str],
        exclude_tags: list[str],
        default_excluded: list[str],
    ) -> Selection:
        """The selection of the flags, the project's excluded tags applying unless ``--tag``
        names them (a tag both wanted and excluded on the command line is bad input)."""
        both = sorted(set(tags) & set(exclude_tags))
        if both:
            raise ConfigError(
                f"--tag {both[0]} and --exclude-tag {both[0]}: a case cannot be both in and out"
            )
        excluded = set(exclude_tags) | (set(default_excluded) - set(tags))
        return cls(run_filter, run_text, frozenset(tags), frozenset(excluded))

    @property
    def by_tags(self) -> bool:
        """Whether tags take part in the selection."""
        return bool(self.tags or self.exclude)

    def keeps(self, info: CaseInfo) -> bool:
        """Whether the case runs."""
        if self.run_filter is not None and self.run_filter.search(info.id) is None:
            return False
        if self.tags and self.tags.isdisjoint(info.tags):
            return False
        return self.exclude.isdisjoint(info.tags)

    def describe(self) -> str:
        """The filters in words: ``tag smoke, not tag slow, --run ^sub``."""
        parts = []
        if self.tags:
            parts.append("tag " + " or ".join(sorted(self.tags)))
        if self.exclude:
            parts.append("not tag " + ", ".join(sorted(self.exclude)))
        if self.run_text:
            parts.append(f"--run {self.run_text}")
        return ", ".join(parts)
