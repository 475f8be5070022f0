"""Writes ``chats.json``: the development set of standing instructions, preferences, the
order of things and facts in long user-assistant chats (issue: standing instructions).

Written from scratch for fastmem (no benchmark's text): every sentence below is ours. Each
chat is a user's months of sessions with a coding/writing/cooking/... assistant: ordinary
requests answered in long markdown, and, spread among them, the things a later session
needs: a standing instruction ("always add type hints when you show me Python"), a
preference ("I prefer PostgreSQL over MySQL"), a later contradiction of some of them,
topics brought up in an order, facts about the user, and a recommendation buried in a long
answer. The questions come after the last session; each names the message ids that hold
its evidence, and for instructions and preferences the superseded message a recall must
not show as standing.

Run ``python tests/data/make_chats.py`` to rewrite the file (deterministic: seed 7).
"""

from __future__ import annotations

import json
import os
import random

SEED = 7
CHATS = 12
SESSIONS = 7
DAY = 86400.0
T0 = 1_735_700_000.0  # 2025-01-01

# (instruction, a later request it applies to, [its contradiction, a request after it])
INSTRUCTIONS = [
    ("Always add type hints when you show me Python code.",
     "Write me a function that parses the upload CSV into a list of dicts.",
     ("Drop the type hints from now on, my team's scripts never use them.",
      "Give me a Python snippet that renames every .jpeg file in a folder to .jpg.")),
    ("From now on, whenever you write SQL for me, put the keywords in uppercase.",
     "Can you give me a query that counts orders per customer for last month?", None),
    ("Never use jQuery in front-end examples for me; plain DOM APIs only.",
     "How do I toggle a dropdown menu when its button is clicked?", None),
    ("When I ask for shell commands, assume I'm on macOS with zsh.",
     "How do I find every file over 100 MB in my home folder?",
     ("I've moved to a Linux laptop with bash, so assume that for shell commands from now on.",
      "What's the command to see which process is listening on port 8080?")),
    ("Please use pytest, not unittest, whenever you write tests for me.",
     "Add tests for the slugify helper we wrote earlier.",
     ("Change of plan for tests: use unittest from now on, the CI image can't install pytest.",
      "Write tests for the date parsing function.")),
    ("Always explain the time complexity right after you give me an algorithm.",
     "How can I find two numbers in an array that add up to a target?", None),
    ("Always use British spelling in anything you draft for me.",
     "Draft a short note to the neighbours about the garden party on Saturday.",
     ("Switch to American spelling from now on, the new client is in Boston.",
      "Draft a welcome message for the new client's onboarding pack.")),
    ("Whenever you write an email for me, keep it under 120 words.",
     "Write an email asking my landlord to fix the boiler.", None),
    ("Don't use em dashes in my blog posts, ever.",
     "Write an intro paragraph for my blog post about sourdough starters.", None),
    ("From now on, give me recipe quantities in grams, not cups.",
     "How do I make banana bread?",
     ("Give me recipe quantities in cups again from now on, I finally bought measuring cups.",
      "What do I need for a batch of oatmeal cookies?")),
    ("Always tell me oven temperatures in Celsius.",
     "How long should I roast a whole chicken?", None),
    ("Whenever you suggest a workout, start it with a warm-up.",
     "Give me a 30-minute leg session I can do at the gym.", None),
    ("When you plan trips for me, always include a rainy-day option.",
     "Plan a day in Lisbon for me.", None),
    ("Always use matplotlib's object-oriented API in plotting examples.",
     "Plot monthly revenue as a bar chart from my dataframe.", None),
    ("Never suggest paid tools to me unless I ask for them.",
     "What can I use to record my screen for a tutorial?", None),
    ("When you review my code, list the problems before any praise.",
     "Here's my retry decorator, can you review it?", None),
]

# (preference, a later request it should shape, [its update, a request after it])
PREFERENCES = [
    ("I prefer PostgreSQL over MySQL, mostly for its JSON support.",
     "Help me design the schema for my blog.",
     ("I've switched to preferring SQLite for small projects now; one file is so much easier to back up.",
      "Which database should the bookmark manager use?")),
    ("I'd rather use Vue than React for side projects.",
     "What should I build the front end of my recipe app with?",
     ("I've gone off Vue lately; these days I'd rather use Svelte for anything small.",
      "What should I use for the front end of the habit tracker?")),
    ("I prefer tabs over spaces for indentation.",
     "Set up an editorconfig file for the new repository.", None),
    ("I use Poetry for dependency management because it locks everything.",
     "How should I manage the dependencies of my new command-line tool?", None),
    ("I'm vegetarian and I really like spicy food.",
     "Suggest a dinner I could cook on Friday.", None),
    ("I like morning runs much better than evening workouts.",
     "Make me a weekly training plan for a 10k.", None),
    ("I prefer window seats and short layovers when I fly.",
     "Find me a good way to fly to Tokyo in April.", None),
    ("I prefer serif fonts for anything long that people read.",
     "Pick fonts for my newsletter.", None),
    ("I'd rather take the train than fly for trips under five hours.",
     "How should I get from Paris to Amsterdam?", None),
    ("I like my explanations short, with one example, not a wall of text.",
     "Explain what a Python generator is.", None),
    ("I prefer Neovim to VS Code for everyday editing.",
     "Which editor plugins would help with writing Markdown?", None),
    ("I love hiking trips with a night in a mountain hut.",
     "Suggest a long weekend away in the Alps.", None),
]

# (the user's fact, the question, the answer word)
FACTS = [
    ("By the way, my side project is called Larkspur.", "What is my side project called?", "Larkspur"),
    ("My dog Biscuit has to be walked at seven, so I'll be offline for a bit.", "What's my dog's name?", "Biscuit"),
    ("I moved to Leeds in March, the flat is tiny.", "Which city did I move to?", "Leeds"),
    ("Our sprint demo is every second Thursday afternoon.", "When is our sprint demo?", "Thursday"),
    ("My manager Priya wants the report by Friday.", "Who is my manager?", "Priya"),
    ("Quick note: I'm allergic to peanuts.", "What am I allergic to?", "peanuts"),
    ("I work on a 2020 ThinkPad with 16 GB of memory.", "What laptop do I work on?", "ThinkPad"),
    ("My daughter Ana starts school in September.", "When does my daughter start school?", "September"),
    ("The staging server runs on a Hetzner box in Falkenstein.", "Where does the staging server run?", "Hetzner"),
    ("I'm training for the Bristol half marathon in October.", "Which race am I training for?", "Bristol"),
    ("Our team's main repository is called harbor-api.", "What is our main repository called?", "harbor-api"),
    ("My sister Lucia is visiting from Valencia next month.", "Who is visiting me next month?", "Lucia"),
]

# topics a user brings up over the sessions (three per chat, in session order)
TOPICS = [
    ("Rust", "I've started to think about learning Rust this year."),
    ("Kubernetes", "Someone at work suggested we move everything to Kubernetes, what do you think?"),
    ("GraphQL", "I keep reading about GraphQL, is it worth a look for our API?"),
    ("a sabbatical", "I'm toying with the idea of taking a three-month sabbatical."),
    ("pottery", "I signed up for a pottery class on Tuesday evenings."),
    ("Spanish lessons", "I want to start Spanish lessons before the trip."),
    ("a standing desk", "I'm thinking of buying a standing desk for the home office."),
    ("solar panels", "We got a quote for solar panels on the roof today."),
    ("a home server", "I'd like to set up a small home server for backups."),
    ("chess", "I've been playing a lot of chess online in the evenings."),
    ("a podcast", "My friend and I want to start a podcast about old video games."),
    ("composting", "We started composting kitchen scraps in the garden."),
]

# (what the assistant recommended deep inside a long answer, the later question, the answer word)
RECOMMENDATIONS = [
    ("For the JSON parsing itself I'd reach for the orjson library: it is several times faster than the "
     "standard module and handles dataclasses and datetimes out of the box.",
     "Which JSON library did you recommend for the parser?", "orjson"),
    ("For the scheduling, a cron expression of `15 3 * * 1` runs it every Monday at 03:15, which keeps "
     "it away from the nightly backup window.",
     "What cron schedule did you suggest for the cleanup job?", "15 3"),
    ("As for the hydration during the long run, aim for roughly 500 ml per hour, sipped every twenty "
     "minutes rather than all at once.",
     "How much water per hour did you tell me to drink on long runs?", "500 ml"),
    ("On the camera settings, start from f/8 at ISO 100 and let the shutter speed follow the light.",
     "What aperture did you suggest for the landscape shots?", "f/8"),
    ("For the bread, the key number is 75% hydration: 375 grams of water for every 500 grams of flour.",
     "What hydration did you recommend for the bread dough?", "75%"),
    ("For the backups I'd use restic with a B2 bucket as the target, pruning with --keep-daily 7.",
     "Which backup tool did you recommend?", "restic"),
]

DOMAINS = {
    "code": {
        "asks": [
            "Why does my Flask app return a 404 for the static files?",
            "What's the difference between a process and a thread?",
            "How do I read a large file line by line without loading it all?",
            "Can you explain what a race condition is with an example?",
            "My Docker image is 2 GB, how do I make it smaller?",
            "How should I structure a small Python package?",
            "What does git rebase do compared to merge?",
            "How do I paginate results from a REST API?",
            "Why is my regular expression so slow on long lines?",
            "How do I profile a slow Python script?",
            "What is the best way to store passwords in a database?",
            "How do environment variables get into a container?",
        ],
        "lines": [
            "The short version is that the server never sees the path you think it does.",
            "Start by measuring before you change anything: a profile shows where the time goes.",
            "Most of the size comes from the build tools, which the final image does not need.",
            "A multi-stage build copies only the artefacts into a slim base image.",
            "Threads share the memory of their process, so two of them can write the same value at once.",
            "Reading the file as an iterator keeps one line in memory at a time.",
            "Rebase rewrites your commits on top of the other branch; merge keeps both histories.",
            "Cursor-based pagination is more robust than page numbers when rows are added meanwhile.",
            "Catastrophic backtracking happens when nested quantifiers can match the same text many ways.",
            "Use a slow, salted hash made for passwords, never a general-purpose digest.",
            "Keep configuration out of the code so the same build runs everywhere.",
            "Write a small test that reproduces the problem before fixing it.",
            "Log the request path and the resolved file path side by side to see the mismatch.",
            "The standard library covers this well; you rarely need an extra dependency here.",
            "Lock files make the build reproducible across machines.",
        ],
        "code": "```python\nfor line in open(path, encoding=\"utf-8\"):\n    handle(line.rstrip(\"\\n\"))\n```",
    },
    "writing": {
        "asks": [
            "Can you tighten this paragraph about our quarterly results?",
            "How do I write a good subject line for a newsletter?",
            "What's a polite way to decline a meeting invitation?",
            "Give me three titles for a talk about remote work.",
            "How long should a cover letter be?",
            "Can you make this product description sound less stiff?",
            "How do I structure a how-to article?",
            "What is the difference between affect and effect?",
        ],
        "lines": [
            "Lead with the point the reader cares about and keep the background for later.",
            "Short sentences carry numbers better than long ones.",
            "A subject line works when it says what is inside, not when it teases.",
            "Declining politely means thanking, giving a brief reason and offering an alternative.",
            "Cut every word that does not change the meaning of the sentence.",
            "Active verbs make the description feel like a person wrote it.",
            "A how-to article promises one outcome and walks through the steps in order.",
            "Read the draft aloud; the stumbles show where the rhythm breaks.",
            "One idea per paragraph keeps the reader oriented.",
            "End with what you want the reader to do next.",
        ],
        "code": "> **Before:** We are pleased to announce that results have improved.\n> **After:** Revenue rose 12% this quarter.",
    },
    "cooking": {
        "asks": [
            "How do I keep rice from getting sticky?",
            "What can I make with leftover roast vegetables?",
            "Why did my cake sink in the middle?",
            "How do I sharpen a kitchen knife properly?",
            "What's a good way to meal-prep lunches for the week?",
            "How do I make a stock from scratch?",
            "Why do my pancakes come out flat?",
            "How long does cooked pasta keep in the fridge?",
        ],
        "lines": [
            "Rinse the rice until the water runs almost clear to wash off the loose starch.",
            "Leftover vegetables make a good frittata or a blended soup.",
            "A cake usually sinks when the oven door is opened too early or the batter is over-mixed.",
            "Hold the blade at a steady angle and draw it across the stone in even strokes.",
            "Cook two bases and three toppings on Sunday and combine them differently each day.",
            "Simmer the bones gently; a rolling boil makes the stock cloudy.",
            "Flat pancakes often mean the baking powder is old or the batter rested too long.",
            "Cool food quickly and keep it covered to make it last.",
            "Season in layers rather than all at the end.",
            "Taste as you go; recipes are a starting point, not a contract.",
        ],
        "code": "| step | time |\n|---|---|\n| rest the dough | 30 min |\n| bake | 25 min |",
    },
    "fitness": {
        "asks": [
            "How do I stop my knees hurting when I run?",
            "How many rest days should I take a week?",
            "What should I eat before a long run?",
            "Is it better to stretch before or after exercise?",
            "How do I get better at pull-ups?",
            "How do I track progress if the scale doesn't move?",
        ],
        "lines": [
            "Knee pain when running often comes from increasing distance too quickly.",
            "Most people do well with one or two full rest days a week.",
            "Eat something light and familiar two hours before a long run.",
            "Dynamic movements before exercise, longer stretches after it.",
            "Negative reps and hanging holds build the strength for the full pull-up.",
            "Measure performance and how clothes fit, not only weight.",
            "Sleep is part of the training plan, not a break from it.",
            "Progress comes from consistency over months, not heroic single sessions.",
        ],
        "code": "- Monday: easy 5 km\n- Wednesday: intervals\n- Saturday: long run",
    },
    "travel": {
        "asks": [
            "What should I pack for a week of city sightseeing?",
            "How early should I get to the airport for an international flight?",
            "Is travel insurance worth it for a short trip?",
            "How do I avoid jet lag on an eastbound flight?",
            "What's the best way to find quiet places to stay?",
            "How do I get around a city without a car?",
        ],
        "lines": [
            "Pack for layers and comfortable shoes; you will walk more than you expect.",
            "Arrive three hours before an international departure at a big airport.",
            "Insurance pays for itself the one time a flight is cancelled.",
            "Shift your sleep an hour earlier each day for a few days before leaving.",
            "Look for places a street back from the main square.",
            "Public transport day passes are usually cheaper than single tickets.",
            "Book the first night and leave the rest flexible.",
            "Keep a copy of your documents somewhere other than your bag.",
        ],
        "code": "1. Passport and a copy\n2. Chargers and an adapter\n3. A light rain jacket",
    },
    "data": {
        "asks": [
            "How do I merge two dataframes on a date column?",
            "What is the difference between mean and median for skewed data?",
            "How do I deal with missing values in a survey dataset?",
            "Which chart should I use to compare categories over time?",
            "How do I make my pandas code faster on ten million rows?",
            "How do I explain a confidence interval to my manager?",
        ],
        "lines": [
            "Parse both date columns to the same type before merging, or the keys will not match.",
            "The median resists outliers; the mean moves with them.",
            "Decide per column whether a missing value means zero, unknown or not asked.",
            "Small multiples compare categories over time without a tangle of lines.",
            "Vectorised operations beat row-wise apply by orders of magnitude.",
            "A confidence interval is the range of values the data cannot rule out.",
            "Plot the raw data first; summaries hide surprises.",
            "Keep the cleaning steps in one function so they can be rerun.",
        ],
        "code": "```python\ndf = df.merge(other, on=\"date\", how=\"left\")\n```",
    },
}


def _answer(rng: random.Random, domain: str, long: bool) -> str:
    d = DOMAINS[domain]
    n_sec = rng.randint(4, 7) if long else rng.randint(1, 2)
    parts = []
    for s in range(n_sec):
        lines = rng.sample(d["lines"], k=min(len(d["lines"]), rng.randint(3, 6)))
        if n_sec > 1:
            parts.append(f"### {['Why', 'What to do', 'Step by step', 'Pitfalls', 'Checklist', 'An example', 'Next'][s]}")
        parts.append(" ".join(lines))
        if rng.random() < 0.4:
            parts.append("\n".join(f"- {x}" for x in rng.sample(d["lines"], k=3)))
        if rng.random() < 0.3:
            parts.append(d["code"])
    return "\n\n".join(parts)


def _chat(rng: random.Random, c: int) -> dict:
    domains = rng.sample(sorted(DOMAINS), k=3)
    instr = rng.sample(INSTRUCTIONS, k=3)
    prefs = rng.sample(PREFERENCES, k=3)
    facts = rng.sample(FACTS, k=3)
    topics = rng.sample(TOPICS, k=3)
    rec = rng.choice(RECOMMENDATIONS)
    # what is said in which session: instructions and preferences early, contradictions late
    plan: dict[int, list] = {s: [] for s in range(SESSIONS)}
    for i, x in enumerate(instr):
        plan[rng.randint(0, 2)].append(("instruction", x))
        if x[2]:
            plan[rng.randint(4, SESSIONS - 1)].append(("instruction_update", x))
    for x in prefs:
        plan[rng.randint(0, 3)].append(("preference", x))
        if x[2]:
            plan[rng.randint(4, SESSIONS - 1)].append(("preference_update", x))
    for x in facts:
        plan[rng.randint(0, SESSIONS - 1)].append(("fact", x))
    for i, x in enumerate(topics):  # in session order: 0-1, 2-3, 4-6
        plan[[rng.randint(0, 1), rng.randint(2, 3), rng.randint(4, 6)][i]].append(("topic", x))
    plan[rng.randint(1, SESSIONS - 2)].append(("recommendation", rec))
    messages, said = [], {}
    day = c * 3.0
    for s in range(SESSIONS):
        day += rng.randint(5, 14)  # sessions a week or two apart
        t = T0 + day * DAY
        events = plan[s] + [("ask", None)] * rng.randint(4, 6)
        rng.shuffle(events)
        for what, x in events:
            dom = rng.choice(domains)
            long = rng.random() < 0.35
            if what == "ask":
                user = rng.choice(DOMAINS[dom]["asks"])
                answer = _answer(rng, dom, long)
            elif what == "recommendation":
                user = rng.choice(DOMAINS[dom]["asks"])
                body = _answer(rng, dom, True).split("\n\n")
                body.insert(len(body) // 2, x[0])
                answer = "\n\n".join(body)
            else:
                text = x[1] if what == "topic" else x[2][0] if what.endswith("_update") else x[0]
                # sometimes said in passing, after thanks for the last answer
                user = (rng.choice(["Thanks, that worked. ", "Great, got it. ", "OK. "]) + text
                        if rng.random() < 0.3 else text)
                answer = _answer(rng, dom, False) if what in ("topic", "fact") else \
                    rng.choice(["Understood, I'll do that from now on.", "Noted.", "Got it, I'll keep that in mind."])
            for role, text in (("user", user), ("assistant", answer)):
                mid = f"c{c}:m{len(messages)}"
                messages.append({"id": mid, "role": role, "session": s, "at": t, "text": text})
                t += rng.randint(20, 240)
            if what != "ask":
                said[(what, x[0])] = messages[-2]["id"] if what != "recommendation" else messages[-1]["id"]
    qs = []
    for kind, items in (("instruction", instr), ("preference", prefs)):
        for x in items:  # after an update, the question asked after it; its evidence the update
            if x[2]:
                qs.append({"kind": kind, "question": x[2][1], "evidence": [said[(kind + "_update", x[0])]],
                           "superseded": [said[(kind, x[0])]]})
            else:
                qs.append({"kind": kind, "question": x[1], "evidence": [said[(kind, x[0])]]})
    for x in facts:
        qs.append({"kind": "fact", "question": x[1], "evidence": [said[("fact", x[0])]], "answer": x[2]})
    names = [x[0] for x in topics]
    qs.append({"kind": "order", "question": f"In what order did I bring up {names[0]}, {names[1]} and {names[2]} "
               "across our conversations?".replace(f"{names[0]}, {names[1]}", f"{names[1]}, {names[0]}"),
               "evidence": [said[("topic", x[0])] for x in topics]})
    qs.append({"kind": "fact", "question": rec[1], "evidence": [said[("recommendation", rec[0])]],
               "answer": rec[2], "long": True})
    return {"id": f"c{c}", "messages": messages, "questions": qs}


def main() -> None:
    rng = random.Random(SEED)
    data = {"about": __doc__.strip().splitlines()[0], "chats": [_chat(rng, c) for c in range(CHATS)]}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "chats.json"), "w") as f:
        json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
