"""``fastmem ui``: the pages are the library underneath, writes need the CSRF token, read-only
mode has no writing control, a token server refuses strangers; then the same clicked
through in a real browser (Debian's chromium driven by Playwright, no browser download)."""

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("starlette", reason="fastmem ui needs fastmem[ui] (starlette, jinja2, uvicorn)")

from starlette.testclient import TestClient  # noqa: E402

import fastmem  # noqa: E402
from fastmem.ui import create_app  # noqa: E402
from tests.shared import (  # noqa: E402
    CARS,
    DRIVERS,
    background,  # noqa: E402
)
from tests.shared import STORIES as CO_OCCURRING  # noqa: E402

STORIES = ["My neighbour Lena moved from Lisbon to Berlin in May and found a flat near the river.",
           "Acme Corporation bought Widget Inc last year and kept its founders as managers.",
           "The gardener planted tomatoes in March, watered them daily and harvested them in August.",
           "The staging database password rotates every 30 days."]
RHYME = "My cousin Ana moved from Porto to Madrid in June and rented a room by the park."
TOKEN = "ui-test-token-0123456789-abcdefghij"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ui") / "ui.db")
    with fastmem.Memory(path, analogy=fastmem.AnalogySettings(min_store=2)) as m:
        ids = m.remember_many(STORIES, source="chat")
        m.remember("Other tenants keep their own notes about Lisbon.", scope="other")
    return path, ids


@pytest.fixture(scope="module")
def passes_store(tmp_path_factory):
    """A store the background passes have something to propose in: a category, a chunk."""
    path = str(tmp_path_factory.mktemp("ui") / "passes.db")
    with fastmem.Memory(path) as m:
        m.remember_many(background(200))
        m.remember_many([f"{p} drives a {c} to work." for p, c in zip(DRIVERS, CARS)])
        m.remember_many(CO_OCCURRING["oslo"])
        assert m.consolidate().created and m.categories.propose()
    return path


@pytest.fixture
def mem(store, tmp_path):
    """A fresh copy of the module's store (tests that forget change it)."""
    path = str(tmp_path / "copy.db")
    shutil.copyfile(store[0], path)
    with fastmem.Memory(path, analogy=fastmem.AnalogySettings(min_store=2)) as m:
        yield m, store[1]


@pytest.fixture
def passes(passes_store, tmp_path):
    path = str(tmp_path / "passes.db")
    shutil.copyfile(passes_store, path)
    with fastmem.Memory(path) as m:
        yield m


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def test_the_recall_page_is_memory_recall_with_the_analogys_mapping(mem):
    m, ids = mem
    c = TestClient(create_app(m, scope=""))
    page = c.get("/recall", params={"q": RHYME, "k": 3})
    assert page.status_code == 200
    want = m.recall(RHYME, k=3, scope="", record=False)
    shown = [int(x) for x in re.findall(r'<td><a href="/memory/(\d+)">', page.text)]
    assert shown == [h.id for h in want.hits]
    assert want.analogy is not None and want.analogy.id == ids[0]
    block = page.text[page.text.index('id="analogy"'):page.text.index('id="hits"')]
    assert "Lena" in block and 'id="mapping"' in block
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td></tr>", block)
    assert ("person move place, time", "person move place, time") in rows  # what maps to what
    assert m.use.counts(ids[0])["surfaced"] == 0  # looking is not use


def test_forget_needs_the_pages_csrf_token_and_then_removes_the_memory(mem):
    m, ids = mem
    c = TestClient(create_app(m))
    target = ids[3]
    assert c.post(f"/memory/{target}/forget", data={"csrf": "guess"}).status_code == 403
    assert c.post(f"/memory/{target}/forget").status_code == 403
    assert m.get(target)  # still there
    confirm = c.get(f"/memory/{target}/forget")
    assert "cannot be undone" in confirm.text
    done = c.post(f"/memory/{target}/forget", data={"csrf": _csrf(confirm.text)})
    assert done.status_code == 200 and "forgotten" in done.text and "password rotates" in done.text
    assert target not in [h.id for h in m.recall("database password", k=5, record=False).hits]
    assert c.get(f"/memory/{target}").status_code == 404


def test_read_only_shows_no_writing_control_and_refuses_a_crafted_post(passes):
    m = passes
    c = TestClient(create_app(m, read_only=True))
    first, chunks = m.rows.newest(limit=1)[0], m.chunks.list()
    chunk = chunks[0]
    for url in ("/", f"/memory/{first}", f"/memory/{chunk}", "/health", "/recall?q=Omar", "/review",
                "/graph?name=Omar", "/use"):
        html = c.get(url).text
        html = re.sub(r'<form class="search".*?</form>', "", html, flags=re.S)  # a search reads, by POST
        assert 'method="post"' not in html.lower() and "/forget" not in html, url
        assert "Approve" not in html and "Dissolve" not in html, url
    assert "Approve" in TestClient(create_app(m)).get("/review").text  # shown when the server writes
    for url in (f"/memory/{first}/forget", "/", f"/review/chunk/{chunk}/dissolve"):
        r = c.post(url, data={"csrf": "x"})
        assert r.status_code == 403 and "read-only" in r.text
    assert c.post("/recall", data={"q": "Omar"}).status_code == 200  # a search is a read
    assert m.get(first) and m.chunks.list() == chunks


def test_a_scope_confines_every_page(mem):
    m, ids = mem
    c = TestClient(create_app(m, scope=""))
    other = m.rows.newest(scope="other", limit=1)[0]
    assert c.get(f"/memory/{other}").status_code == 404
    assert f'href="/memory/{other}"' not in c.get("/").text
    assert f'href="/memory/{other}"' not in c.get("/recall", params={"q": "Lisbon notes"}).text
    assert f'href="/memory/{other}"' in TestClient(create_app(m)).get("/recall", params={"q": "Lisbon notes"}).text


def test_errors_are_pages_with_the_librarys_message(mem):
    m, _ = mem
    c = TestClient(create_app(m), raise_server_exceptions=False)
    r = c.get("/memory/987654")
    assert r.status_code == 404 and "no memory with id 987654" in r.text and "Traceback" not in r.text
    r = c.get("/recall", params={"q": "x", "k": "lots"})
    assert r.status_code == 400 and "k must be a whole number" in r.text
    r = c.get("/recall", params={"q": "x", "k": "0"})
    assert r.status_code == 400 and "between 1 and 50" in r.text
    r = c.get("/", params={"offset": "-1"})
    assert r.status_code == 400 and "a whole number of 0 or more" in r.text and "4611686018427387904" not in r.text
    r = c.post("/recall", data={"q": "where is Lena? " * 5000})  # 75,000 characters: posted, the app's own page
    assert r.status_code == 400 and "over the maximum of 32,000" in r.text and "Traceback" not in r.text


def test_the_recall_page_says_in_words_why_and_why_not(mem):
    """The analogy card reads as a sentence (numbers behind "details"); a turn with no analogy
    says why; chit-chat gets the evidence floor's verdict instead of confident unrelated hits,
    and the nearest memories only on request."""
    m, ids = mem
    c = TestClient(create_app(m, scope=""))
    page = c.post("/recall", data={"q": RHYME, "k": 3}).text
    card = page[page.index('id="analogy"'):page.index('id="hits"')]
    assert "Reminds me of" in card and "odds of 1 in" in card and "<details>" in card
    assert card.index("<details>") < card.index("bits") and "p =" not in card[:card.index("<details>")]
    none = c.post("/recall", data={"q": "How often does the staging password rotate?"}).text
    assert 'id="no-analogy"' in none and "No analogy: " in none and 'id="analogy"' not in none
    chat = c.post("/recall", data={"q": "haha ok cool, thanks!"}).text
    assert 'id="grounding"' in chat and "This turn is small talk" in chat
    assert not re.findall(r'<td><a href="/memory/(\d+)">', chat)
    anyway = c.post("/recall", data={"q": "haha ok cool, thanks!", "floor": "0"}).text
    assert re.findall(r'<td><a href="/memory/(\d+)">', anyway)


def _car_category(m):
    return next(c for c in m.categories.list() if len({x.lower() for x in c.members} & {x.lower() for x in CARS}) >= 4)


def test_a_category_approved_in_review_is_a_graph_node_until_reverted(passes):
    m = passes
    c = TestClient(create_app(m))
    cat = _car_category(m)
    review = c.get("/review")
    assert f'action="/review/category/{cat.id}/approve"' in review.text
    done = c.post(f"/review/category/{cat.id}/approve", data={"csrf": _csrf(review.text)})
    assert done.status_code == 200 and "approved" in done.text and f"/review/category/{cat.id}/revert" in done.text
    node = c.get("/graph", params={"name": cat.name})
    assert node.status_code == 200 and 'id="entity"' in node.text
    near = node.text[node.text.index('id="neighbours"'):]
    assert sum(car in near for car in CARS) >= 4  # its members link to it
    assert c.post(f"/review/category/{cat.id}/revert", data={"csrf": _csrf(done.text)}).status_code == 200
    assert c.get("/graph", params={"name": cat.name}).status_code == 404
    assert m.categories.list("proposed") and cat.id in {x.id for x in m.categories.list("proposed")}


def test_dissolving_a_chunk_in_review_keeps_its_members(passes):
    m = passes
    c = TestClient(create_app(m))
    chunks = m.chunks.list()
    chunk = chunks[0]
    members = [r.id for r in m.expand(chunk)]
    review = c.get("/review")
    done = c.post(f"/review/chunk/{chunk}/dissolve", data={"csrf": _csrf(review.text)})
    assert done.status_code == 200 and "dissolved" in done.text
    assert m.chunks.list() == chunks[1:] and all(m.get(x) for x in members)
    assert c.post(f"/review/chunk/{chunk}/dissolve", data={"csrf": _csrf(review.text)}).status_code == 404


def test_the_graph_page_follows_a_path_and_the_use_page_plots_the_ledger(passes):
    m = passes
    c = TestClient(create_app(m))
    page = c.get("/graph", params={"a": "Omar", "b": "Fjord Labs"})
    assert page.status_code == 200 and 'id="path"' in page.text and "Fjord Labs" in page.text
    r = m.recall("Where is Omar moving?", k=3, session="s")
    m.feedback(r.hits[0].id, engaged=True)
    use = c.get("/use")
    assert use.status_code == 200 and 'id="timeline"' in use.text
    rising = use.text[use.text.index('id="rising"'):use.text.index('id="sinking"')]
    assert f'href="/memory/{r.hits[0].id}"' in rising


def test_a_server_with_a_token_refuses_a_request_without_it(mem):
    m, _ = mem
    c = TestClient(create_app(m, token=TOKEN))
    r = c.get("/")
    assert r.status_code == 401 and "/login" in r.text
    assert c.get("/", headers={"Authorization": "Bearer " + TOKEN[:-1]}).status_code == 401
    assert c.get("/", headers={"Authorization": "Bearer " + TOKEN}).status_code == 200
    assert c.post("/login", data={"token": "wrong"}).status_code == 401
    assert c.post("/login", data={"token": "wrong\u00e9"}).status_code == 401  # any text: refused, not a crash
    assert c.get("/", headers={b"cookie": "fastmem_ui=t\u00e9".encode()}).status_code == 401
    r = c.post("/login", data={"token": TOKEN}, follow_redirects=False)
    assert r.status_code == 303 and "httponly" in r.headers["set-cookie"].lower()
    assert "samesite=strict" in r.headers["set-cookie"].lower()
    page = c.get("/")  # the client keeps the cookie
    assert page.status_code == 200 and TOKEN not in page.text


def test_the_command_refuses_a_network_bind_without_the_flag_and_the_token(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("FASTMEM_UI_TOKEN", None)
    base = [sys.executable, "-m", "fastmem", "ui", "--db", str(tmp_path / "s.db"), "--host", "0.0.0.0"]
    out = subprocess.run(base, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 2 and "--allow-remote" in out.stderr
    out = subprocess.run(base + ["--allow-remote"], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 2 and "needs a token" in out.stderr
    short = tmp_path / "token"
    short.write_text("short\n")
    out = subprocess.run(base + ["--allow-remote", "--token-file", str(short)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 2 and "at least 24" in out.stderr and "short" not in out.stderr


# -- in a real browser ---------------------------------------------------------------------
def _chromium() -> str | None:
    for name in (os.environ.get("FASTMEM_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _browser_or_skip():
    need = os.environ.get("FASTMEM_REQUIRE_BROWSER") == "1"  # CI: a missing browser fails, never skips
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if need:
            raise
        pytest.skip("Playwright is not installed (pip install playwright; the browser is Debian's chromium)")
    exe = _chromium()
    if exe is None:
        if need:
            raise AssertionError("FASTMEM_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return sync_playwright, exe


class _Server:
    """The app on uvicorn in a thread, on a free loopback port."""

    def __init__(self, app) -> None:
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the ui server did not start"
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def browser():
    sync_playwright, exe = _browser_or_skip()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def _ask(page, text: str) -> None:
    """Recall ``text`` through the page's search form, as a user does."""
    page.get_by_label("query").fill(text)
    page.get_by_role("button", name="Recall").click()


def test_in_a_browser_recall_shows_the_hit_and_the_mapping_and_forget_removes_it(mem, browser):
    m, ids = mem
    with _Server(create_app(m)) as url:
        page = browser.new_page()
        page.goto(url + "/")
        _ask(page, RHYME)
        page.wait_for_selector("#hits")
        assert "Lena moved from Lisbon to Berlin" in page.locator("#analogy").inner_text()
        mapping = page.locator("#mapping").inner_text()
        assert mapping.count("person move place, time") == 2  # the turn's event and the memory's, side by side
        _ask(page, "How often does the staging password rotate?")
        first = page.locator("#hits tr").nth(1)
        assert "password rotates every 30 days" in first.inner_text()
        first.get_by_role("link").first.click()
        page.get_by_role("link", name="Forget this memory…").click()
        page.get_by_role("button", name="Forget it").click()
        assert "forgotten" in page.locator("#done").inner_text()
        _ask(page, "How often does the staging password rotate?")
        assert "password rotates" not in page.locator("#hits").inner_text()
    assert ids[3] not in [h.id for h in m.recall("staging password", k=5, record=False).hits]


def test_in_a_browser_the_recall_page_explains_the_analogy_its_absence_and_chit_chat(mem, browser):
    """What a user reads: the analogy card in words with the numbers folded away, why there is no
    analogy, and for chit-chat the floor's verdict with the nearest memories one click away."""
    m, ids = mem
    with _Server(create_app(m)) as url:
        page = browser.new_page()
        page.goto(url + "/")
        _ask(page, RHYME)
        card = page.locator("#analogy")
        assert "Reminds me of" in card.inner_text() and "odds of 1 in" in page.locator("#chance").inner_text()
        assert not page.locator("#reason").is_visible()  # bits and p behind "details"
        page.locator("#analogy summary").click()
        assert "bits" in page.locator("#reason").inner_text()
        _ask(page, "How often does the staging password rotate?")
        assert page.locator("#no-analogy").inner_text().startswith("No analogy: ")
        _ask(page, "haha ok cool, thanks!")
        assert "An agent would be shown nothing here" in page.locator("#grounding").inner_text()
        assert page.locator("#hits tr").count() == 1  # the header only
        page.get_by_role("button", name="Show the nearest memories anyway").click()
        assert page.locator("#hits tr").count() > 1


def test_in_a_browser_read_only_has_no_forget_and_a_token_server_asks_to_sign_in(mem, browser):
    m, ids = mem
    with _Server(create_app(m, read_only=True)) as url:
        page = browser.new_page()
        page.goto(f"{url}/memory/{ids[0]}")
        assert "Lena" in page.locator("#text").inner_text()
        assert page.get_by_role("link", name="Forget this memory…").count() == 0
        assert page.locator("form[method=post]:not(.search)").count() == 0  # a search reads
    with _Server(create_app(m, token=TOKEN)) as url:
        page = browser.new_page()
        r = page.goto(url + "/")
        assert r.status == 401
        page.goto(url + "/login")
        page.get_by_label("Token").fill(TOKEN)
        page.get_by_role("button", name="Sign in").click()
        assert "memories" in page.locator("main").inner_text()


def test_in_a_browser_a_category_approved_in_review_shows_in_the_graph_until_reverted(passes, browser):
    m = passes
    cat = _car_category(m)
    with _Server(create_app(m)) as url:
        page = browser.new_page()
        page.goto(url + "/review")
        page.get_by_role("button", name=f"approve {cat.name}").click()
        assert "approved" in page.locator("#done").inner_text()
        page.get_by_role("link", name="Graph").click()
        page.get_by_label("entity").fill(cat.name)
        page.get_by_role("button", name="Show").click()
        assert cat.name in page.locator("#entity h2").inner_text()
        near = page.locator("#neighbours").inner_text()
        assert sum(car in near for car in CARS) >= 4
        page.get_by_role("link", name="Review").click()
        page.get_by_role("button", name=f"revert {cat.name}").click()
        assert "back to proposed" in page.locator("#done").inner_text()
        page.goto(url + "/graph")
        page.get_by_label("entity").fill(cat.name)
        page.get_by_role("button", name="Show").click()
        assert "no entity named" in page.locator("#error").inner_text()


def test_long_lists_page(passes, monkeypatch):
    from fastmem.ui import app as A

    m = passes
    monkeypatch.setattr(A, "PAGE", 2)
    c = TestClient(create_app(m))
    cats, chunks = m.categories.list(), m.chunks.list()
    assert len(cats) > 2 and len(chunks) > 2
    first = c.get("/review").text
    second = c.get("/review", params={"categories": 2, "chunks": 2}).text
    ids = lambda html, kind: re.findall(rf'action="/review/{kind}/(\d+)/', html)  # noqa: E731
    assert len(set(ids(first, "category"))) == 2 and f"1-2 of {len(cats)}" in first and "categories=2#categories" in first
    assert set(ids(first, "category")).isdisjoint(ids(second, "category")) and "3-4 of" in second
    assert set(ids(first, "chunk")).isdisjoint(ids(second, "chunk"))
    home = c.get("/").text
    assert len(re.findall(r'<td class="num"><a href="/memory/', home)) == 2 and "offset=2" in home
