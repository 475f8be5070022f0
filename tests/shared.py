"""What several test modules share: where the development data lives, the repository's own
test data, and texts that stores are filled with."""

import os
import random
from pathlib import Path

#: ``../shared/data`` beside the checkout (or ``$FASTMEM_DATA``): real data nobody on the project
#: wrote; tests that need it skip, saying so, when it is absent.
DATA = Path(os.environ.get("FASTMEM_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
#: The repository's own test data (``tests/data``).
TESTDATA = Path(__file__).resolve().parent / "data"


WORDS = (
    "apple river stone cloud market violin garden engine paper silver winter doctor lamp "
    "forest copper window ticket harbor pencil candle meadow rocket"
).split()


#: Short narratives of distinct structures (a move, an acquisition, a harvest, a repair...), for
#: stores the analogy slot must find a rhyme in.
NARRATIVES = [
    "My neighbour Lena moved from Lisbon to Berlin in May and found a flat near the river.",
    "Acme Corporation bought Widget Inc last year and kept its founders as managers.",
    "The gardener planted tomatoes in March, watered them daily and harvested them in August.",
    "Bob repaired the old bicycle and sold it to a student in town.",
    "The committee approved the budget after a long debate on Tuesday.",
    "Maria baked bread for the neighbours and delivered it by bike.",
    "The storm flooded the valley and the villagers rebuilt the bridge.",
    "Tom wrote a novel about sailors and published it in the spring.",
    "The startup hired ten engineers and opened an office in Lisbon.",
]


def noise_texts(n, seed=1):
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(9)) + f" note {i}." for i in range(n)]


FACTS = """Maria teaches chemistry at the local high school.
The Rhine flows through Basel before reaching Germany.
Tom's sister lives in Denver with her two cats.
The quarterly report is due on the first Monday of March.
Priya prefers green tea over coffee in the morning.
The museum closes at six on weekdays.
Kenji plays the cello in a community orchestra.
Heavy rain flooded the basement last spring.
The bakery on Elm Street sells sourdough on Fridays.
Lena is allergic to peanuts and shellfish.
The train from Lyon arrives at platform four.
Our landlord raised the rent by five percent.
Sam is learning Portuguese before his trip to Brazil.
The printer on the third floor jams when the paper is damp.
Grandpa was born in a small village near Krakow.
The hiking trail is closed because of rockfall.
Olga runs a marathon every autumn.
The budget meeting was moved to Thursday afternoon.
Ravi fixed the leaking kitchen faucet himself.
The library card expires at the end of the year.""".splitlines()


STORIES = {
    "lisbon": ["Nadia booked a flight to Lisbon for the Acme offsite.",
               "Nadia reserved a hotel in Lisbon near the Acme office.",
               "The Acme offsite in Lisbon starts on June 3.",
               "Nadia will present the Acme roadmap in Lisbon.",
               "Acme pays for Nadia's Lisbon hotel.",
               "Nadia asked Acme to move the Lisbon dinner to Friday."],
    "oslo": ["Omar is moving to Oslo in August.",
             "Omar signed a lease for an apartment in Oslo.",
             "Omar's new job in Oslo is at Fjord Labs.",
             "Fjord Labs offered Omar a relocation bonus for Oslo.",
             "Omar will start at Fjord Labs once he lands in Oslo."],
    "wedding": ["Priya and Marco set their wedding date at the Villa Rosa in Tuscany.",
                "Marco asked the Villa Rosa in Tuscany about vegetarian menus.",
                "Priya booked a photographer for the Villa Rosa wedding in Tuscany.",
                "The Villa Rosa in Tuscany requires a deposit from Priya and Marco by May."],
}
PEOPLE = "Alice Bruno Chen Dmitri Elena Farid Greta Hiro Ines Jonas Kemal Lucia Mateo Noor Oskar Pia".split()
PLACES = "Berlin Denver Krakow Osaka Lyon Basel Toledo Porto Quito Nairobi Perth Boston".split()
THINGS = ["a new bike", "the garden", "a violin", "a kayak", "the old car", "a telescope", "the roof", "a laptop"]


def background(n=240, seed=3):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        p, place, thing = rnd.choice(PEOPLE), rnd.choice(PLACES), rnd.choice(THINGS)
        out.append(rnd.choice([f"{p} repaired {thing} on day {i}.", f"{p} bought {thing} at a market on day {i}.",
                               f"{p} visited {place} on day {i}.", f"{p} painted {thing} on day {i}."]))
    return out


CARS = ["Tesla", "Volvo", "Fiat", "Subaru", "Toyota"]
DRIVERS = ["Alice", "Bob", "Carol", "Dan", "Erik"]


FILLER = """The dentist appointment is on Friday at nine.
Carla teaches chemistry at the high school.
The ferry to the island leaves every two hours.
Dan ran the Berlin marathon in under four hours.
The wifi password at the Lisbon office is blue-heron-42.
Grandpa was born in a small village near Krakow.
The office kitchen runs out of milk on Mondays.
Mia is allergic to cats.
Snow closed the mountain pass for three days.
The invoice for March is still unpaid.
Leo practises the piano every evening.
The garden hose leaks near the tap.
Our flight to Osaka was delayed by an hour.
Nora is studying for her driving test.
The conference badge has to be collected at the front desk.
Heavy fog delayed the morning trains.
The old bridge is being repainted this summer.
Raj prefers window seats on long flights.
The library extends loans by two weeks online.
A storm knocked out the power on Tuesday night.""".splitlines()
#: The post's example: "a company owns a subsidiary" is the analogy for "a friend owns a car".
OWNS = "Acme Corporation owns Widget Inc, a small subsidiary in Ohio."
SAME_TOPIC = "Bob bought a used red car from a dealer last week."
