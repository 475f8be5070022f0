"""The demo's memories and questions (``fastmem demo``)."""

DEMO = [
    "Alice moved to Berlin in May.",
    "Alice prefers green tea over coffee.",
    "Bob works for Initech as a data engineer.",
    "Acme Corporation owns Widget Inc, a small subsidiary in Ohio.",
    "The quarterly report is due on the first Monday of March.",
    "Kenji plays the cello in a community orchestra.",
    "Heavy rain flooded the basement last spring.",
    "The wifi password at the Lisbon office is blue-heron-42.",
    "Priya teaches chemistry at the local high school.",
    "Olga runs a marathon every autumn.",
    "The museum closes at six on weekdays.",
    "Grandpa was born in a small village near Krakow.",
]
DEMO_QUERIES = ["where does Alice live?", "what is the Lisbon wifi password?", "My friend Bob owns a red car."]
