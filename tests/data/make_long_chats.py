"""Writes ``long_chats.json``: long technical user-assistant chats, the hard case of standing
instructions, preferences and ordering (issue: recall on long technical chats).

Written from scratch for fastmem, before any rule was changed for them, and frozen since (every
sentence below is ours; no benchmark's text). What makes them hard, on purpose:

- every assistant answer is long markdown (headings, lists, code; 350-900 words) that repeats
  the request's own words, so answers share the everyday words of later requests;
- instructions are *conditional* ("whenever I ask about implementation details ...") and the
  later request meets the condition in other words ("how would I go about building ..."),
  hedged ("it would help me a lot if ..."), or said in passing inside a longer message;
- preferences are *situations* inside a question ("I'm trying to keep the app lightweight, so
  I'd rather not pull in big dependencies. How should I ...?") and the later request that
  should follow them asks for suggestions in other words;
- ordering questions ask for the aspects of one project brought up across sessions, each
  introduced by a user message in a different session, answered by long answers that repeat
  the project's name;
- facts about the user, asked about in other words.

Chats ``c0``-``c5`` are the development part; ``c6``-``c9`` are held out (read at the end
only). Run ``python tests/data/make_long_chats.py`` to rewrite the file (deterministic: seed 11).
"""

from __future__ import annotations

import json
import os
import random

SEED = 11
CHATS = 10
HELD_OUT = frozenset(range(6, 10))
SESSIONS = 7
DAY = 86400.0
T0 = 1_767_225_600.0  # 2026-01-01

# (the message that says it, a later request it applies to)
INSTRUCTIONS = [
    ("Whenever I ask about implementation details, include a short code example in your answer.",
     "How would I go about building the retry logic for the payment webhook?"),
    ("If I ask which libraries a project depends on, give me the exact version numbers too.",
     "What packages does the scraper need in order to run?"),
    ("When we talk about performance, always quote numbers with their units, never just 'faster'.",
     "Is the new image resizer quick enough for the upload page?"),
    ("Any time I ask for a database query, show me the index it would use as well.",
     "Could you fetch the ten most recent invoices for each client?"),
    ("For anything about deployment, end your answer with the rollback steps.",
     "We're ready to ship version 2.3 to production tomorrow, what's the plan?"),
    ("I'd really appreciate it if, when you explain an error, you first tell me the most likely cause in one line.",
     "My build fails with 'module not found: lodash/merge', what's going on?"),
    ("It would help me a lot if every time I ask about security you mention the relevant OWASP item.",
     "Is it safe to put the user's id straight into the redirect URL?"),
    ("Quick request for the future: if I ask for a regex, explain each part of it on its own line.",
     "I need a pattern that matches UK postcodes."),
    ("When I ask you to compare two options, put the comparison in a table.",
     "Redis or Memcached for the session cache?"),
    ("Please, whenever I ask about estimates or timelines, give me a range rather than a single number.",
     "How long will the move to the new billing provider take?"),
    ("If I ask about naming things, suggest three alternatives and say which one you'd pick.",
     "What should I call the class that wraps the S3 client?"),
    ("When I paste a stack trace, point to the exact line you think is at fault before anything else.",
     "Here's what I get when the worker starts: Traceback (most recent call last): File \"config.py\", "
     "line 42, in load KeyError: 'region'"),
    ("Whenever my question is about testing, mention how to run the test in CI too.",
     "How do I check that the CSV export copes with empty rows?"),
    ("In future, when I ask for shell commands, add a comment explaining any flag that isn't obvious.",
     "How can I copy the logs from the server to my laptop, skipping files I already have?"),
    ("When the topic is accessibility, cite the WCAG success criterion you're relying on.",
     "Is light grey text on white OK for the footer links?"),
    ("If my question involves data pipelines, always say what happens when a step fails halfway.",
     "Design the nightly job that moves orders from Postgres into the warehouse."),
    ("I think it'd be better if, when you suggest refactors, you keep the public interface unchanged unless I "
     "say otherwise.",
     "The checkout module is a mess, how would you clean it up?"),
    ("Something I'd like from here on: when I ask about APIs, show the request and the response as JSON examples.",
     "How should the endpoint for cancelling a subscription look?"),
    ("When I ask for a commit message, follow the conventional commits format.",
     "Write the message for the change that fixes the timezone bug in reports."),
    ("Going forward, if a question involves dates or times, assume UTC unless I say otherwise.",
     "Schedule the cleanup task to run every night at 2."),
]

# (the message that holds it, inside a question; a later request it should shape)
PREFERENCES = [
    ("I'm trying to keep the app lightweight, so I'd rather not pull in big dependencies. How should I handle "
     "routing in the single-page app?",
     "What libraries would you suggest for form validation?"),
    ("Our team is mostly junior, so I lean towards boring, well-documented tools over clever ones. What's a good "
     "way to structure the background jobs?",
     "Which framework should we pick for the new admin dashboard?"),
    ("I care a lot about privacy and I don't want user data leaving our servers. How do we add search to the "
     "docs site?",
     "Can you recommend an analytics setup for the marketing pages?"),
    ("Since I'm on a tight budget, free tiers and self-hosting suit me better than paid services. Where should "
     "the staging environment live?",
     "What should I use for sending transactional emails?"),
    ("I'm much more comfortable in Python than JavaScript, so server-side rendering with Django feels safer to me "
     "than a React front end. How should I build the signup flow?",
     "How would you build the interactive seat picker for the booking page?"),
    ("I like to understand what's going on under the hood, so I'd rather write things by hand than use magic "
     "generators. How do I set up the REST endpoints?",
     "Should I scaffold the new service with the CLI template?"),
    ("We deploy to a Raspberry Pi at the client's shop, so anything that needs lots of memory is out for me. "
     "What's a good way to store the sensor readings?",
     "Which message queue would fit for passing events between the services?"),
    ("Honestly I enjoy functional style much more than classes, so map and filter over loops for me when it's "
     "readable. Can you help me process these log lines?",
     "Rewrite the report generator so it's easier to read."),
    ("My users are mostly on slow mobile connections, so I favour small pages over rich animations. What should "
     "the landing page hero look like?",
     "Which image format should the product gallery use?"),
    ("I tend to go for typed languages when a project will live for years; dynamic typing has bitten me before. "
     "What's a good setup for the new billing service?",
     "What language would you use for the inventory microservice?"),
    ("Because I review everything on my phone, I like small pull requests that do one thing. How should I split "
     "the refactor of the auth module?",
     "Plan the work for adding multi-currency support."),
    ("I'm not a fan of ORMs for reporting queries, raw SQL is easier for me to reason about. How do I get "
     "monthly active users?",
     "How should the new dashboard pull its revenue figures?"),
    ("Vendor lock-in worries me, so where I can I'd pick open standards over a cloud provider's own services. "
     "How do I set up tracing?",
     "Where should we run the scheduled jobs?"),
    ("I'm happiest with plain CSS; utility frameworks make the markup unreadable for me. How do I lay out the "
     "pricing cards?",
     "How should I style the new settings page?"),
]

# a project and the user messages that bring up three of its aspects, in this order
PROJECTS = [
    ("the recipe-sharing app", [
        "I've started sketching the database schema for the recipe-sharing app: recipes, ingredients and users.",
        "Next for the recipe-sharing app: people need to sign in, probably with magic email links.",
        "The recipe-sharing app is nearly done, so let's talk about hosting it and the deploy pipeline."]),
    ("my bird-watching newsletter", [
        "For my bird-watching newsletter, I need to pick a platform to send it from.",
        "The first issue of the bird-watching newsletter needs a layout; what should the template look like?",
        "Readers of my bird-watching newsletter are asking for a paid tier; how would I set up subscriptions?"]),
    ("the warehouse robot simulator", [
        "I'm building a simulator for the warehouse robots, and the first question is how to model the floor grid.",
        "The warehouse robot simulator needs path planning now; A* or something simpler?",
        "Time to visualise the warehouse robot simulator runs; what's a good way to plot the robots' paths?"]),
    ("my thesis on coastal erosion", [
        "I'm collecting the data for my thesis on coastal erosion: satellite images and tide gauge records.",
        "For the coastal erosion thesis I have to choose a statistical model for shoreline change.",
        "I'm writing the results chapter of my coastal erosion thesis; how should I present the uncertainty?"]),
    ("the expense tracker app", [
        "Starting on the expense tracker app: should receipts be scanned on the phone or on a server?",
        "For the expense tracker app, I want categories suggested automatically from the merchant name.",
        "The expense tracker app needs an export that accountants can import; which format should it be?"]),
    ("the family photo archive", [
        "I want to digitise the family photo archive; what scanner settings should I use for old prints?",
        "The family photo archive now needs a folder structure and a naming scheme for the files.",
        "For the family photo archive, how can I keep a backup somewhere outside the house?"]),
    ("my hobby chess engine", [
        "My hobby chess engine needs a board representation; bitboards or a plain array?",
        "The search in my hobby chess engine is slow; can you walk me through alpha-beta pruning?",
        "I want to test my hobby chess engine against other engines; how do I run a tournament?"]),
    ("the bakery website", [
        "The bakery website needs a menu page that the owner can update herself.",
        "Online pre-orders for celebration cakes are the next thing for the bakery website.",
        "The bakery website should show up when people nearby search for bread; what should I do about SEO?"]),
    ("the greenhouse controller", [
        "I'm wiring sensors into the greenhouse controller: temperature, humidity and soil moisture.",
        "The greenhouse controller should water the plants by itself; how do I write the control loop?",
        "I want alerts on my phone from the greenhouse controller when it gets too hot inside."]),
    ("my local history podcast", [
        "I'm launching a local history podcast; which microphone should I buy to record interviews?",
        "My local history podcast needs an editing workflow; is Audacity enough or should I use something else?",
        "How do I get my local history podcast listed in the main podcast directories?"]),
]
ORDER_QUESTION = ("Can you list the order in which I brought up different aspects of {p} across our "
                  "conversations? Mention only three items.")

# (the user's message, a later question about it, the answer)
FACTS = [
    ("Just so you know, the team is five developers, two of them in Berlin and the rest remote.",
     "How many people work on my team?", "five"),
    ("We launched the beta on the 3rd of March, a week earlier than planned. Anyway, how do I rotate the API keys?",
     "When did the beta go live?", "3 March"),
    ("My main laptop is a 2019 ThinkPad with 16 GB of RAM, which is why local builds crawl.",
     "What machine do I develop on?", "ThinkPad"),
    ("The client for the shop project is called Marta; she runs the place with her brother.",
     "Who owns the shop I'm building the site for?", "Marta"),
    ("Our production database is about 400 GB now and grows roughly 10 GB a month.",
     "How big has the production data store become?", "400 GB"),
    ("I moved from Lyon to Montreal last autumn for the new job, so my hours are Eastern time now.",
     "Which city am I living in these days?", "Montreal"),
    ("Our CI runs on a self-hosted GitLab runner in the office cupboard, nothing in the cloud.",
     "Where do our builds actually run?", "self-hosted GitLab runner"),
    ("My manager, Priya, wants a demo of the reporting feature by the end of the quarter.",
     "Who is expecting to see the reporting demo?", "Priya"),
    ("We settled on Stripe for payments after the PayPal integration kept timing out.",
     "Which payment provider did we go with in the end, and why?", "Stripe"),
    ("I've been learning Rust on weekends for about six months now.",
     "How long have I been studying Rust?", "six months"),
    ("Our biggest customer is a chain of 40 pharmacies in Portugal.",
     "Who is our largest client?", "pharmacy chain"),
    ("The app has about 12,000 monthly active users, most of them in Brazil.",
     "Where are most of our users based?", "Brazil"),
]

ASKS = [
    "How do I set up connection pooling for the API server?",
    "What's the cleanest way to handle configuration across dev, staging and production?",
    "Can you explain how JWT refresh tokens should work in our login flow?",
    "Why does the test suite take twelve minutes, and how can I speed it up?",
    "How should I structure the folders of a medium-sized React project?",
    "What's the difference between a message queue and a pub/sub topic?",
    "How do I add rate limiting to the public endpoints?",
    "Can you help me write a Dockerfile for the worker service?",
    "How do I stream a large CSV download from the server without running out of memory?",
    "What's a sensible logging setup for a small team?",
    "How should I version the public API?",
    "Explain eventual consistency like I'm a backend developer who has only used one database.",
    "How do I debug a memory leak in a long-running Node process?",
    "How can I make the search page return results faster?",
    "What should go into a good README for an internal tool?",
    "How do I migrate a column from text to integer without downtime?",
    "How do feature flags work, and should I build my own?",
    "What's the best way to handle file uploads to object storage?",
    "How do I write a background task that retries with backoff?",
    "Can you review this plan for splitting the monolith into services?",
    "How do I cache expensive queries without serving stale data for too long?",
    "What are the trade-offs of server-side rendering for a dashboard?",
    "How should I handle time zones for users in different countries?",
    "How do I set up end-to-end tests for the checkout flow?",
    "Walk me through setting up HTTPS for a self-hosted service.",
    "What's a good branching strategy for a team of four?",
    "How do I keep secrets out of the git repository?",
    "How should the mobile app sync data when it comes back online?",
    "How can I measure which pages of the site are slowest for real users?",
    "What's the simplest way to add full-text search to a Postgres app?",
    "How do I design a schema for tags that many items can share?",
    "How should I paginate the activity feed?",
    "What's the right way to validate user input on the server?",
    "How do I profile the slow report generation in Python?",
    "How do I run database migrations safely during a deploy?",
    "How do I write a good incident post-mortem?",
    "How should errors be shown to users in the web app?",
    "What's a reasonable on-call setup for a team this small?",
    "How do I set up a staging database with realistic but anonymised data?",
    "How do I structure a monorepo with a web app and a shared library?",
]

STOP = frozenset("""a an the and or but if so to of in on at for with from by as is are was were be been being do
does did how what why which who whom whose when where can could would should will shall may might must i me my we
our you your it its this that these those there here about into over under up down out not no yes just please
get got let lets let's need want like make sure some any all each every more most much many very really than then
now also too one two three""".split())

OPENERS = [
    "Good question. Here's how I'd approach {t}, step by step, with the trade-offs spelled out.",
    "Sure. There are a few ways to handle {t}; below is the one I'd pick and why.",
    "Let's break {t} down. The short answer first, then the details you'll need.",
    "Happy to help with {t}. I'll start with the overview and then get concrete.",
]
SECTIONS = ["Overview", "The approach I'd take", "Step by step", "An example", "Things to watch out for",
            "Testing it", "How this fits the rest of your setup", "Summary"]
SENTENCES = [
    "The main thing to get right with {a} is keeping it simple enough that you can reason about it later.",
    "In practice, {a} and {b} interact more than it first looks, so change one at a time and measure.",
    "Most teams start with the simplest version of {a}, then add pieces only when a real problem shows up.",
    "If you need {b} as well, keep it behind a small interface so you can swap it out without touching callers.",
    "You can make {a} much easier to debug by logging what goes in and what comes out at the boundaries.",
    "A common mistake is to tie {a} to one environment; keep the settings in configuration instead.",
    "Before you optimise {a}, write down what 'good enough' means, otherwise the work never ends.",
    "It helps to write a short note in the README about how {a} works, for whoever touches it next.",
    "For {b}, the defaults are usually fine; only change them when you can measure the difference.",
    "Think about what happens to {a} when the network is slow or a dependency is down.",
    "Keep {a} small and boring: the clever version is the one that wakes you up at night.",
    "The documentation for {b} covers the edge cases well, and it's worth reading the section on limits.",
    "When {a} grows, split it along the lines where the data changes for different reasons.",
    "I'd also add a check in CI so that {a} can't silently break when someone changes {b}.",
    "Remember that users will find the one path through {a} you didn't test, so test the boring paths too.",
    "A quick way to check {a} is to run it locally with production-like data and watch the logs.",
]
BULLETS = [
    "Keep {a} in one place so there is a single source of truth.",
    "Add a test for the failure case of {a}, not only the happy path.",
    "Document the settings that {b} needs.",
    "Measure before and after the change to {a}.",
    "Make the error messages around {a} say what to do next.",
    "Review {b} again once real traffic arrives.",
    "Automate the boring parts of {a}.",
    "Write down why you chose this approach to {a}.",
]
CODE = [
    "```python\ndef run(job, attempts=5):\n    for i in range(attempts):\n        try:\n            return job()\n"
    "        except TransientError:\n            time.sleep(2 ** i)\n    raise\n```",
    "```yaml\nservices:\n  api:\n    build: .\n    environment:\n      - DATABASE_URL\n    ports:\n"
    "      - \"8000:8000\"\n```",
    "```sql\nSELECT customer_id, count(*)\nFROM orders\nWHERE created_at >= now() - interval '30 days'\n"
    "GROUP BY customer_id;\n```",
    "```bash\nset -euo pipefail\nmake build\nmake test\n```",
    "```ts\nexport async function load(id: string) {\n  const res = await fetch(`/api/items/${id}`);\n"
    "  if (!res.ok) throw new Error(res.statusText);\n  return res.json();\n}\n```",
]
ACKS = ["Got it, I'll keep that in mind from now on.", "Understood, noted for everything that follows.",
        "Sure, I'll do that from here on.", "Noted. I'll stick to that."]


def _words(text: str) -> list[str]:
    out = []
    for w in text.replace("?", " ").replace(",", " ").replace(".", " ").replace(":", " ").split():
        w = w.strip("'\"()").lower()
        if len(w) > 3 and w not in STOP and w.isascii() and w not in out:
            out.append(w)
    return out or ["this"]


def _answer(rng: random.Random, request: str) -> str:
    """A long markdown answer that repeats the request's words, as assistants do."""
    ws = _words(request)
    topic = " ".join(ws[:3])

    def fill(s: str) -> str:
        a = " ".join(rng.sample(ws, k=min(2, len(ws))))
        b = rng.choice(ws)
        return s.format(a=a, b=b)

    parts = [rng.choice(OPENERS).format(t=topic)]
    for title in rng.sample(SECTIONS, k=rng.randint(4, 6)):
        parts.append(f"## {title}")
        parts.append(" ".join(fill(s) for s in rng.sample(SENTENCES, k=rng.randint(3, 6))))
        if rng.random() < 0.5:
            parts.append("\n".join("- " + fill(b) for b in rng.sample(BULLETS, k=rng.randint(3, 5))))
        if rng.random() < 0.3:
            parts.append(rng.choice(CODE))
    parts.append(f"Let me know how {topic} goes, and I can go deeper on any part of it.")
    return "\n\n".join(parts)


def _chat(rng: random.Random, c: int, instr: list, prefs: list, facts: list, project) -> dict:
    plan: dict[int, list] = {s: [] for s in range(SESSIONS)}
    for x in instr:
        plan[rng.randint(0, 3)].append(("instruction", x))
    for x in prefs:
        plan[rng.randint(0, 4)].append(("preference", x))
    for x in facts:
        plan[rng.randint(0, SESSIONS - 1)].append(("fact", x))
    name, aspects = project
    for s, text in zip((rng.randint(0, 1), rng.randint(2, 4), rng.randint(5, 6)), aspects):
        plan[s].append(("aspect", (text,)))
    messages, said = [], {}
    day = c * 2.0
    for s in range(SESSIONS):
        day += rng.randint(4, 12)
        t = T0 + day * DAY
        events = plan[s] + [("ask", None)] * rng.randint(5, 8)
        rng.shuffle(events)
        for what, x in events:
            if what == "ask":
                user = rng.choice(ASKS)
                answer = _answer(rng, user)
            elif what == "instruction":
                # said alone, or in passing inside a longer message
                if rng.random() < 0.4:
                    user = (rng.choice(["Thanks, that schema works. ", "OK, the deploy went fine. ",
                                        "That fixed it, thanks. "]) + x[0] + " " + rng.choice(ASKS))
                    answer = rng.choice(ACKS) + "\n\n" + _answer(rng, user)
                else:
                    user, answer = x[0], rng.choice(ACKS)
            elif what == "preference":
                user = x[0]
                answer = _answer(rng, user)
            else:
                user = x[0]
                answer = _answer(rng, user)
            for role, text in (("user", user), ("assistant", answer)):
                messages.append({"id": f"c{c}:m{len(messages)}", "role": role, "session": s, "at": t, "text": text})
                t += rng.randint(30, 300)
            if what != "ask":
                said[(what, x[0])] = messages[-2]["id"]
    qs = [{"kind": "instruction", "question": x[1], "evidence": [said[("instruction", x[0])]]} for x in instr]
    qs += [{"kind": "preference", "question": x[1], "evidence": [said[("preference", x[0])]]} for x in prefs]
    qs += [{"kind": "fact", "question": x[1], "evidence": [said[("fact", x[0])]], "answer": x[2]} for x in facts]
    qs.append({"kind": "order", "question": ORDER_QUESTION.format(p=name),
               "evidence": [said[("aspect", a)] for a in aspects]})
    return {"id": f"c{c}", "part": "heldout" if c in HELD_OUT else "dev", "messages": messages, "questions": qs}


def main() -> None:
    rng = random.Random(SEED)
    instr, prefs, facts, projects = (rng.sample(x, k=len(x)) for x in (INSTRUCTIONS, PREFERENCES, FACTS, PROJECTS))
    chats = []
    for c in range(CHATS):
        chats.append(_chat(rng, c, instr[2 * c:2 * c + 2], prefs[c::CHATS], facts[c::CHATS], projects[c]))
    data = {"about": __doc__.strip().splitlines()[0], "chats": chats}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "long_chats.json"), "w") as f:
        json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
