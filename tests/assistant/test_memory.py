"""ctx.memory: the SQLite store, the four namespaces and every namespace operation."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentcli.assistant.memory import (
    DEFAULT_TTLS,
    Memory,
    MemoryStore,
    Namespace,
    default_memory_path,
)
from agentcli.errors import AgentRuntimeError, ConfigError, StorageError

REPO_ROOT = Path(__file__).resolve().parents[2]


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[MemoryStore]:
    memory_store = MemoryStore(tmp_path / "memory.sqlite3", clock=clock)
    yield memory_store
    memory_store.close()


@pytest.fixture
def ns(store: MemoryStore) -> Namespace:
    return Namespace(store, "user", "u1")


def raw_rows(path: Path) -> list[tuple]:
    """Rows as another SQLite client sees them (expired ones included)."""
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT kind, owner, key FROM memory ORDER BY key").fetchall()


# -- the store ----------------------------------------------------------------------------


def test_default_path_follows_agentcli_home(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "home"))
    assert default_memory_path() == tmp_path / "home" / "memory.sqlite3"
    assert MemoryStore().path == tmp_path / "home" / "memory.sqlite3"


def test_default_path_without_agentcli_home(monkeypatch, tmp_path):
    monkeypatch.delenv("AGENTCLI_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_memory_path() == tmp_path / ".local/share/agentcli/memory.sqlite3"


def test_file_created_on_first_use_with_parent_folders_in_wal_mode(tmp_path):
    path = tmp_path / "a" / "b" / "memory.sqlite3"
    store = MemoryStore(path)
    assert not path.parent.exists()
    Namespace(store, "user", "u").set("k", 1)
    assert path.exists()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    store.close()


def test_values_survive_close_and_a_new_store(tmp_path):
    path = tmp_path / "m.sqlite3"
    first = MemoryStore(path)
    Namespace(first, "team", "t").set("cfg", {"theme": "dark"})
    first.close()
    second = MemoryStore(path)
    assert Namespace(second, "team", "t").get("cfg") == {"theme": "dark"}
    second.close()


def test_not_a_database_is_a_config_error_with_a_hint(tmp_path):
    path = tmp_path / "memory.sqlite3"
    path.write_bytes(b"this is not sqlite at all, just some text" * 100)
    with pytest.raises(ConfigError) as caught:
        Namespace(MemoryStore(path), "user", "u").get("k")
    assert str(path) in caught.value.message
    assert "move the file away" in (caught.value.hint or "")


def test_unwritable_location_is_a_config_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError) as caught:
        Namespace(MemoryStore(blocker / "sub" / "memory.sqlite3"), "user", "u").set("k", 1)
    assert "AGENTCLI_HOME" in (caught.value.hint or "")


@contextmanager
def held_exclusively(path: Path) -> Iterator[None]:
    """Another connection holding a write lock on the SQLite file ``path``."""
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        yield
    finally:
        holder.rollback()
        holder.close()


def assert_locked_error(error: StorageError, path: Path) -> None:
    """A locked store is a storage error naming the file and what to do."""
    assert not isinstance(error, AgentRuntimeError)  # not a misuse of the runtime
    assert (
        error.message == f"the memory store {path} is locked by another process (still after 0.1s)"
    )
    assert "retry when it is done" in (error.hint or "") and "AGENTCLI_HOME" in (error.hint or "")


def test_a_write_to_a_store_another_process_locked_is_a_storage_error(tmp_path):
    path = tmp_path / "memory.sqlite3"
    namespace = Namespace(MemoryStore(path, busy_timeout=0.1), "user", "u")
    namespace.set("k", 1)  # the store is open (in WAL mode) before the lock is taken
    with held_exclusively(path):
        started = time.monotonic()
        with pytest.raises(StorageError) as caught:
            namespace.set("k", 2)
        assert time.monotonic() - started < 3  # the busy timeout bounds the wait
    assert_locked_error(caught.value, path)
    namespace.set("k", 3)  # usable again once the lock is released
    assert namespace.get("k") == 3


def test_opening_a_store_another_process_locked_is_a_storage_error(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with sqlite3.connect(path) as conn:  # a rollback-journal file: the lock blocks reads too
        conn.execute("CREATE TABLE other (x)")
    with held_exclusively(path), pytest.raises(StorageError) as caught:
        Namespace(MemoryStore(path, busy_timeout=0.1), "user", "u").get("k")
    assert_locked_error(caught.value, path)


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=99")
    with pytest.raises(ConfigError, match="newer agentcli"):
        Namespace(MemoryStore(path), "user", "u").get("k")


def test_expired_keys_of_any_owner_are_purged_when_the_store_opens(tmp_path, clock):
    path = tmp_path / "memory.sqlite3"
    first = MemoryStore(path, clock=clock)
    Namespace(first, "chat", "old-chat").set("k", 1, ttl=5)
    Namespace(first, "user", "u").set("keep", 1)
    first.close()
    clock.now += 6
    second = MemoryStore(path, clock=clock)
    Namespace(second, "user", "u").get("keep")
    assert raw_rows(path) == [("user", "u", "keep")]
    second.close()


# -- key-value ----------------------------------------------------------------------------


def test_get_set_round_trip_json_values(ns):
    values = {
        "s": "héllo",
        "i": 3,
        "f": 2.5,
        "b": False,
        "n": None,
        "l": [1, "a", {"x": [True]}],
        "d": {"nested": {"k": [1, 2]}},
    }
    for key, value in values.items():
        ns.set(key, value)
    for key, value in values.items():
        assert ns.get(key) == value
    assert ns.has("n")  # a stored null is still a key
    assert ns.get("missing") is None
    assert ns.get("missing", "fallback") == "fallback"


def test_get_returns_a_copy(ns):
    ns.set("d", {"items": [1]})
    ns.get("d")["items"].append(2)
    assert ns.get("d") == {"items": [1]}


def test_set_overwrites(ns):
    ns.set("k", 1)
    ns.set("k", "two")
    assert ns.get("k") == "two"
    assert ns.len() == 1


@pytest.mark.parametrize("value", [object(), {1, 2}, float("nan")])
def test_set_non_json_is_a_clear_error_and_stores_nothing(ns, value):
    with pytest.raises(AgentRuntimeError, match=r"memory\.user: cannot store 'k'"):
        ns.set("k", value)
    assert not ns.has("k")


def test_has_delete_getdel(ns):
    ns.set("topic", "ai")
    assert ns.has("topic")
    assert ns.delete("topic") == 1
    assert not ns.has("topic")
    assert ns.delete("topic") == 0
    ns.set("token", "secret")
    assert ns.getdel("token") == "secret"
    assert ns.get("token") is None
    assert ns.getdel("token") is None
    assert ns.getdel("token", "gone") == "gone"


def test_delete_with_a_wildcard_removes_matching_keys_only(ns):
    for key in ("cache:a", "cache:b", "cachex", "other"):
        ns.set(key, 1)
    assert ns.delete("cache:*") == 2
    assert ns.keys() == ["cachex", "other"]


def test_keys_sorted_and_glob(ns):
    for key in ("b", "a", "user:1", "user:22", "User:3"):
        ns.set(key, 1)
    assert ns.keys() == ["User:3", "a", "b", "user:1", "user:22"]
    assert ns.keys("user:*") == ["user:1", "user:22"]  # case-sensitive
    assert ns.keys("user:?") == ["user:1"]
    assert ns.keys("[ab]") == ["a", "b"]
    assert ns.len() == 5 == len(ns)
    assert ns.len("user:*") == 2


def test_clear_only_clears_its_namespace_and_owner(store):
    mine = Namespace(store, "user", "u1")
    other_owner = Namespace(store, "user", "u2")
    other_kind = Namespace(store, "team", "u1")
    for space in (mine, other_owner, other_kind):
        space.set("a", 1)
        space.set("b", 2)
    assert mine.clear() == 2
    assert mine.len() == 0
    assert other_owner.keys() == ["a", "b"]
    assert other_kind.keys() == ["a", "b"]


def test_namespaces_are_isolated_by_kind_and_owner(store):
    memory_1 = Memory.for_request(store, "u1", "t1", "c1")
    memory_2 = Memory.for_request(store, "u2", "t2", "c2")
    for memory, tag in ((memory_1, "1"), (memory_2, "2")):
        memory.user.set("k", "user" + tag)
        memory.team.set("k", "team" + tag)
        memory.chat.set("k", "chat" + tag)
    assert [memory_1.user.get("k"), memory_1.team.get("k"), memory_1.chat.get("k")] == [
        "user1",
        "team1",
        "chat1",
    ]
    assert memory_2.user.get("k") == "user2"
    # the same owner id in another kind is another namespace
    assert Namespace(store, "team", "u1").get("k") is None


def test_absent_owner_ids_still_work(store):
    memory = Memory.for_request(store, None, None, None)
    memory.user.set("k", 1)
    memory.chat.push("l", 1)
    assert memory.user.owner == "" and memory.team.owner == "" and memory.chat.owner == ""
    assert Memory.for_request(store).user.get("k") == 1


# -- ttl ----------------------------------------------------------------------------------


def test_ttl_expiry_hides_then_purges(ns, store, clock):
    ns.set("temp", {"x": 1}, ttl=10)
    ns.set("forever", 1)
    clock.now += 9.9
    assert ns.get("temp") == {"x": 1}
    clock.now += 0.1
    assert ns.get("temp") is None
    assert not ns.has("temp")
    assert ns.keys() == ["forever"]
    assert ns.len() == 1
    assert ns.getdel("temp") is None
    assert raw_rows(store.path) == [("user", "u1", "forever")]


def test_expired_key_is_gone_for_every_operation(ns, clock):
    ns.set("n", 5, ttl=1)
    ns.set("l", [1, 2], ttl=1)
    clock.now += 2
    assert ns.incr("n") == 1  # starts again from 0
    assert ns.array_all("l") == []
    assert ns.push("l", 9) == 1


def test_set_resets_ttl_and_incr_or_push_keep_it(ns, clock):
    ns.set("k", 1, ttl=10)
    clock.now += 5
    ns.set("k", 2)  # a plain set on the user namespace has no ttl
    clock.now += 100
    assert ns.get("k") == 2
    ns.set("c", 1, ttl=10)
    ns.set("l", [], ttl=10)
    clock.now += 5
    ns.incr("c")
    ns.push("l", 1)
    clock.now += 5
    assert not ns.has("c")
    assert not ns.has("l")


@pytest.mark.parametrize("ttl", [0, -1, "10", True])
def test_bad_ttl_is_refused(ns, ttl):
    with pytest.raises(AgentRuntimeError, match="ttl must be a positive number"):
        ns.set("k", 1, ttl=ttl)


def test_chat_namespace_default_ttl_is_a_day(store, clock):
    memory = Memory.for_request(store, "u", "t", "c")
    memory.chat.set("topic", "x")
    memory.chat.incr("turns")
    memory.user.set("pref", "dark")
    clock.now += DEFAULT_TTLS["chat"] - 1
    assert memory.chat.get("topic") == "x"
    clock.now += 1
    assert memory.chat.keys() == []
    assert memory.user.get("pref") == "dark"


def test_default_ttls_can_be_overridden(store, clock):
    memory = Memory.for_request(store, "u", "t", "c", ttls={"chat": None, "user": 5})
    memory.chat.set("k", 1)
    memory.user.set("k", 1)
    clock.now += 10 * DEFAULT_TTLS["chat"]
    assert memory.chat.get("k") == 1
    assert memory.user.get("k") is None


# -- counters -----------------------------------------------------------------------------


def test_incr_and_decr(ns):
    assert ns.incr("views") == 1  # a missing key counts as 0
    assert ns.incr("views", 5) == 6
    assert ns.decr("views", 2) == 4
    assert ns.decr("views") == 3
    assert ns.decr("credits", 5) == -5
    assert ns.incr("score", 0.5) == 0.5
    assert ns.get("views") == 3


def test_incr_on_a_non_number_is_a_clear_error(ns):
    ns.set("name", "bob")
    ns.set("flag", True)
    with pytest.raises(AgentRuntimeError) as caught:
        ns.incr("name")
    assert "cannot incr/decr 'name'" in caught.value.message
    assert 'str "bob", not a number' in caught.value.message
    with pytest.raises(AgentRuntimeError, match="not a number"):
        ns.decr("flag")
    assert ns.get("name") == "bob"


@pytest.mark.parametrize("delta", ["1", None, True])
def test_incr_with_a_non_number_delta_is_refused(ns, delta):
    with pytest.raises(AgentRuntimeError, match="delta must be a number"):
        ns.incr("k", delta)
    assert not ns.has("k")


# -- lists --------------------------------------------------------------------------------


def test_push_spreads_one_list_like_the_seed(ns):
    assert ns.push("h", 1, 2) == 2
    assert ns.push("h", [3, 4]) == 4
    assert ns.push("h", [[5, 6]]) == 5
    assert ns.push("h", {"role": "user"}) == 6
    assert ns.array_all("h") == [1, 2, 3, 4, [5, 6], {"role": "user"}]


def test_push_on_a_non_list_or_with_bad_values_changes_nothing(ns):
    ns.set("s", "text")
    with pytest.raises(AgentRuntimeError, match="'s' holds str \"text\", not a list"):
        ns.push("s", 1)
    ns.push("l", 1)
    with pytest.raises(AgentRuntimeError, match="cannot store 'l'"):
        ns.push("l", 2, object())
    assert ns.array_all("l") == [1]


def test_pop_takes_from_the_end(ns):
    ns.push("q", "a", "b", "c")
    assert ns.pop("q") == "c"
    assert ns.pop("q") == "b"
    assert ns.pop("q") == "a"
    assert ns.pop("q") is None
    assert ns.has("q")  # an emptied list stays
    assert ns.pop("missing") is None
    assert not ns.has("missing")  # reading a missing list does not create it


def test_pull_removes_and_returns_the_last_n(ns):
    ns.push("q", 1, 2, 3, 4, 5)
    assert ns.pull("q", 2) == [4, 5]
    assert ns.array_all("q") == [1, 2, 3]
    assert ns.pull("q", 0) == []
    assert ns.pull("q", -1) == []
    assert ns.pull("q", 10) == [1, 2, 3]
    assert ns.array_all("q") == []
    assert ns.pull("missing", 3) == []
    assert not ns.has("missing")


def test_pull_all_empties_the_list(ns):
    ns.push("batch", {"id": 1}, {"id": 2})
    assert ns.pull_all("batch") == [{"id": 1}, {"id": 2}]
    assert ns.array_len("batch") == 0
    assert ns.pull_all("batch") == []
    assert ns.pull_all("missing") == []
    assert not ns.has("missing")


def test_add_to_set_keeps_values_unique(ns):
    assert ns.add_to_set("visited", ["/home", "/about"]) == 2
    assert ns.add_to_set("visited", ["/home", "/contact", "/contact"]) == 3
    assert ns.add_to_set("visited", "/about", "/faq") == 4
    assert ns.array_all("visited") == ["/home", "/about", "/contact", "/faq"]


def test_add_to_set_uses_json_equality(ns):
    ns.add_to_set("s", [{"a": 1, "b": 2}, 1])
    # key order does not matter; 1, 1.0 and true are different JSON values
    assert ns.add_to_set("s", [{"b": 2, "a": 1}, 1.0, True, 1]) == 4
    assert ns.array_all("s") == [{"a": 1, "b": 2}, 1, 1.0, True]


# -- array access -------------------------------------------------------------------------


def test_array_len_get_set(ns):
    ns.push("m", "a", "b", "c")
    assert ns.array_len("m") == 3
    assert ns.array_get("m", 0) == "a"
    assert ns.array_get("m", -1) == "c"
    assert ns.array_get("m", 3) is None
    assert ns.array_get("m", -4) is None
    ns.array_set("m", 0, {"role": "system"})
    ns.array_set("m", -1, "z")
    assert ns.array_all("m") == [{"role": "system"}, "b", "z"]
    assert ns.array_len("missing") == 0
    assert ns.array_get("missing", 0) is None


def test_array_set_out_of_range_or_missing_is_an_error(ns):
    ns.push("m", "a")
    with pytest.raises(AgentRuntimeError, match=r"index out of range \(the list has 1"):
        ns.array_set("m", 1, "x")
    with pytest.raises(AgentRuntimeError, match="has 0 element"):
        ns.array_set("missing", 0, "x")
    assert not ns.has("missing")
    assert ns.array_all("m") == ["a"]


def test_array_slice_is_inclusive_like_the_seed(ns):
    ns.push("m", list(range(15)))
    assert ns.array_slice("m", -10, -1) == list(range(5, 15))  # "the last 10"
    assert ns.array_slice("m", 0, 2) == [0, 1, 2]
    assert ns.array_slice("m", 13, 100) == [13, 14]
    assert ns.array_slice("m", -100, 1) == [0, 1]
    assert ns.array_slice("m", 5, 2) == []
    assert ns.array_slice("m", 20, 30) == []
    assert ns.array_slice("missing", 0, -1) == []


def test_array_page_counts_pages_from_one(ns):
    ns.push("m", list(range(45)))
    assert ns.array_page("m", 1, 20) == list(range(20))
    assert ns.array_page("m", 2, 20) == list(range(20, 40))
    assert ns.array_page("m", 3, 20) == list(range(40, 45))
    assert ns.array_page("m", 4, 20) == []
    assert ns.array_page("m", 0, 20) == []
    assert ns.array_page("m", 1, 0) == []


def test_array_reads_on_a_non_list_are_errors(ns):
    ns.set("d", {"a": 1})
    for call in (
        lambda: ns.array_len("d"),
        lambda: ns.array_get("d", 0),
        lambda: ns.array_all("d"),
        lambda: ns.array_slice("d", 0, 1),
        lambda: ns.pop("d"),
    ):
        with pytest.raises(AgentRuntimeError, match="not a list"):
            call()


# -- the context namespace ----------------------------------------------------------------


def test_context_namespace_lives_for_one_request(store, tmp_path):
    first = Memory.for_request(store, "u", "t", "c")
    first.context.set("start", 123)
    first.user.set("seen", True)
    assert first.context.get("start") == 123
    second = Memory.for_request(store, "u", "t", "c")
    assert second.context.get("start") is None
    assert second.user.get("seen") is True
    assert all(kind != "context" for kind, _, _ in raw_rows(store.path))
    first.close()
    assert first.context.get("start") is None


def test_context_namespace_is_shared_by_the_request_threads(store):
    memory = Memory.for_request(store, "u", "t", "c")
    worker = threading.Thread(target=memory.context.set, args=("query", "hi"))
    worker.start()
    worker.join()
    assert memory.context.get("query") == "hi"


def test_context_namespace_follows_the_store_clock(store, clock):
    memory = Memory.for_request(store, "u", "t", "c")
    memory.context.set("temp", 1, ttl=300)
    clock.now += 300
    assert memory.context.get("temp") is None


# -- concurrency and processes ------------------------------------------------------------


def test_parallel_threads_lose_no_increments_or_pushes(store):
    def work(worker: int) -> None:
        memory = Memory.for_request(store, "u", "t", f"chat-{worker}")
        for _ in range(200):
            memory.user.incr("count")
            memory.team.push("log", worker)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    memory = Memory.for_request(store, "u", "t", "c")
    assert memory.user.get("count") == 1600
    assert memory.team.array_len("log") == 1600
    assert sorted(set(memory.team.array_all("log"))) == list(range(8))


_CHILD = """
import sys, time
from pathlib import Path
from agentcli.assistant.memory import Memory, MemoryStore
store = MemoryStore()
memory = Memory.for_request(store, "u1", "t1", "c1")
if sys.argv[1] == "write":
    memory.user.set("theme", "dark")
    memory.team.push("members", ["ann", "bob"])
    memory.chat.set("topic", {"name": "ai"})
    memory.context.set("temp", 1)
else:
    memory.user.get("warm-up")  # open the store before the race starts
    go = Path(sys.argv[3])
    Path(sys.argv[4]).touch()
    while not go.exists():
        time.sleep(0.001)
    for _ in range(int(sys.argv[2])):
        memory.user.incr("shared")
store.close()
"""


def run_child(home: Path, *args: str) -> subprocess.Popen:
    env = {"AGENTCLI_HOME": str(home), "PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen([sys.executable, "-c", _CHILD, *args], env=env)


def test_values_persist_across_processes(tmp_path, monkeypatch):
    assert run_child(tmp_path, "write").wait(timeout=60) == 0
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path))
    store = MemoryStore()
    memory = Memory.for_request(store, "u1", "t1", "c1")
    assert memory.user.get("theme") == "dark"
    assert memory.team.array_all("members") == ["ann", "bob"]
    assert memory.chat.get("topic") == {"name": "ai"}
    assert memory.context.get("temp") is None
    assert Memory.for_request(store, "u2", "t1", "c1").user.get("theme") is None
    store.close()


def test_processes_increment_one_counter_atomically(tmp_path, monkeypatch):
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{n}" for n in range(3)]
    children = [run_child(tmp_path, "incr", "1000", str(go), str(flag)) for flag in ready]
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path))
    store = MemoryStore()
    user = Memory.for_request(store, "u1").user
    user.get("warm-up")
    deadline = time.monotonic() + 60
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.005)
    go.touch()  # all four processes now race on the same key
    for _ in range(1000):
        user.incr("shared")
    assert [child.wait(timeout=60) for child in children] == [0, 0, 0]
    assert user.get("shared") == 4000
    store.close()
