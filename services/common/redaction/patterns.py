"""What personal data looks like: the key words, the text patterns, the name
list and the checksums the redaction applies. Data and pure checks only.

Every pattern below is anchored so that it cannot start or end inside a
longer identifier: "BK-9876543210", a UUID or an ISO timestamp contain digit
runs shaped like phones and Aadhaar numbers, and redacting them would blind
the model to the very ids it has to talk about.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass

# --- key words -----------------------------------------------------------------
#
# Keys are split into lower-case words (camelCase, snake_case, kebab-case and
# spaces alike; digits dropped, so "address_line1" is "address line"). A rule
# is a phrase of one or more words and the kind its values are counted as.

# Anywhere in the key: "customer_phone", "phone_alt" and "alt_phone_no" all
# hold a phone number, whatever else the key says.
KEYS_ANYWHERE: tuple[tuple[str, str], ...] = (
    ("pin code", "address"),
    ("zip code", "address"),
    ("postal code", "address"),
    ("post code", "address"),
    ("date of birth", "dob"),
    ("birth date", "dob"),
    ("card number", "card"),
    ("card no", "card"),
    ("account number", "account"),
    ("account no", "account"),
    ("bank account", "account"),
    ("vehicle number", "vehicle"),
    ("vehicle no", "vehicle"),
    ("registration number", "vehicle"),
    ("registration no", "vehicle"),
    ("reg no", "vehicle"),
    ("number plate", "vehicle"),
    ("license plate", "vehicle"),
    ("licence plate", "vehicle"),
    ("e mail", "email"),
    ("phone", "phone"),
    ("phones", "phone"),
    ("mobile", "phone"),
    ("mobiles", "phone"),
    ("telephone", "phone"),
    ("tel", "phone"),
    ("msisdn", "phone"),
    ("whatsapp", "phone"),
    ("landline", "phone"),
    ("fax", "phone"),
    ("email", "email"),
    ("emails", "email"),
    ("address", "address"),
    ("addresses", "address"),
    ("street", "address"),
    ("landmark", "address"),
    ("pincode", "address"),
    ("postcode", "address"),
    ("zipcode", "address"),
    ("zip", "address"),
    ("aadhaar", "aadhaar"),
    ("aadhar", "aadhaar"),
    ("pan", "pan"),
    ("ifsc", "ifsc"),
    ("upi", "upi"),
    ("vpa", "upi"),
    ("iban", "account"),
    ("plate", "vehicle"),
    ("passport", "id_number"),
    ("licence", "id_number"),
    ("license", "id_number"),
    ("voter", "id_number"),
    ("ssn", "id_number"),
    ("otp", "secret"),
    ("password", "secret"),
    ("passcode", "secret"),
    ("pin", "secret"),
    ("dob", "dob"),
    ("birthday", "dob"),
    ("ip", "ip"),
)

# Only as the key's last words: "customer_name" and "rider" name a person,
# while "customer_id", "rider_status" and "customer_tier" are facts about one
# that the model needs.
KEYS_LAST: tuple[tuple[str, str], ...] = (
    ("assigned to", "person"),
    ("assigned by", "person"),
    ("created by", "person"),
    ("updated by", "person"),
    ("modified by", "person"),
    ("approved by", "person"),
    ("received by", "person"),
    ("delivered to", "person"),
    ("handed to", "person"),
    ("handed over to", "person"),
    ("reported by", "person"),
    ("raised by", "person"),
    ("requested by", "person"),
    ("booked by", "person"),
    ("ordered by", "person"),
    ("collected by", "person"),
    ("signed by", "person"),
    ("ship to", "person"),
    ("bill to", "person"),
    ("deliver to", "person"),
    ("name", "person"),
    ("names", "person"),
    ("fullname", "person"),
    ("firstname", "person"),
    ("lastname", "person"),
    ("surname", "person"),
    ("username", "person"),
    ("nickname", "person"),
    ("rider", "person"),
    ("riders", "person"),
    ("customer", "person"),
    ("customers", "person"),
    ("driver", "person"),
    ("drivers", "person"),
    ("recipient", "person"),
    ("recipients", "person"),
    ("sender", "person"),
    ("senders", "person"),
    ("receiver", "person"),
    ("consignee", "person"),
    ("consignor", "person"),
    ("contact", "person"),
    ("contacts", "person"),
    ("assignee", "person"),
    ("assignees", "person"),
    ("owner", "person"),
    ("user", "person"),
    ("person", "person"),
    ("people", "person"),
    ("guardian", "person"),
    ("nominee", "person"),
    ("spouse", "person"),
    # Free text people typed: names and door codes hide in it under no pattern.
    ("note", "note"),
    ("notes", "note"),
    ("remark", "note"),
    ("remarks", "note"),
    ("comment", "note"),
    ("comments", "note"),
    ("instruction", "note"),
    ("instructions", "note"),
    ("feedback", "note"),
)

# "zone_name" and "hub_name" name places and things the model must see; a
# key ending in "name" names a person unless the word before it is one of these.
NAMED_THINGS = frozenset(
    {
        "zone",
        "hub",
        "city",
        "area",
        "region",
        "locality",
        "route",
        "store",
        "warehouse",
        "tenant",
        "team",
        "product",
        "item",
        "sku",
        "skill",
        "tool",
        "agent",
        "model",
        "plan",
        "file",
        "event",
        "queue",
        "service",
        "brand",
        "company",
        "business",
        "merchant",
        "restaurant",
        "shop",
        "org",
        "organisation",
        "organization",
        "vehicle",
        "device",
        "app",
        "host",
        "field",
        "table",
        "column",
        "key",
        "status",
        "stage",
        "category",
        "type",
        "tag",
        "label",
        "bank",
        "branch",
        "state",
        "country",
        "district",
        "station",
        "slot",
        "batch",
        "project",
        "workflow",
        "metric",
        "channel",
        "template",
        "site",
    }
)

# Coordinates under these keys are rounded to the zone rather than removed:
# dispatch needs the area, not the door.
LOCATION_LAST = frozenset({"lat", "lng", "lon", "latitude", "longitude"})
LOCATION_ANYWHERE = frozenset({"location", "coordinates", "coords", "geo", "gps", "latlng", "latlon"})

# --- names -----------------------------------------------------------------------
#
# Names in free text have no shape a pattern can see, so common given names
# and surnames are listed. Words that are also ordinary English or
# operations vocabulary (Mark, Rose, Hope, Dev, Park, Green, King, Ward) are
# left out on purpose: masking "ward 12" or "dev" would cost more than they
# protect. A name under a personal key is masked whether listed or not.
NAMES = frozenset(
    [
        "aarav",
        "aarush",
        "aadhya",
        "aditi",
        "aditya",
        "advait",
        "ahaan",
        "akash",
        "akshay",
        "alok",
        "amit",
        "amitabh",
        "amol",
        "anand",
        "ananya",
        "anika",
        "anil",
        "anita",
        "anjali",
        "ankit",
        "ankita",
        "anoop",
        "anupam",
        "anusha",
        "arjun",
        "arnav",
        "arun",
        "aruna",
        "arvind",
        "aryan",
        "asha",
        "ashish",
        "ashok",
        "ayaan",
        "ayesha",
        "babu",
        "balaji",
        "bhavana",
        "bhavna",
        "bhavya",
        "chetan",
        "chitra",
        "deepa",
        "deepak",
        "deepika",
        "dhruv",
        "dinesh",
        "divya",
        "diya",
        "farhan",
        "fatima",
        "ganesh",
        "gaurav",
        "geeta",
        "geetha",
        "girish",
        "gopal",
        "govind",
        "gurpreet",
        "harish",
        "harpreet",
        "harsh",
        "hemant",
        "imran",
        "irfan",
        "ishaan",
        "ishita",
        "jagdish",
        "jaspreet",
        "jaya",
        "jayant",
        "jyoti",
        "kabir",
        "kajal",
        "kalpana",
        "kamala",
        "karan",
        "karthik",
        "kavita",
        "kavya",
        "kiran",
        "krishna",
        "kriti",
        "kunal",
        "lakshmi",
        "lalita",
        "madhav",
        "madhu",
        "mahesh",
        "manish",
        "manoj",
        "manpreet",
        "meena",
        "meera",
        "mohan",
        "mohammed",
        "mohammad",
        "muhammad",
        "mukesh",
        "murali",
        "nandini",
        "naveen",
        "neha",
        "nikhil",
        "nisha",
        "nitin",
        "pallavi",
        "pankaj",
        "parvati",
        "pooja",
        "prakash",
        "pranav",
        "prateek",
        "praveen",
        "pradeep",
        "priya",
        "priyanka",
        "rahul",
        "rajesh",
        "rajiv",
        "rakesh",
        "ramesh",
        "ravi",
        "rekha",
        "reyansh",
        "rishi",
        "riya",
        "rizwan",
        "rohan",
        "rohit",
        "ruchi",
        "sachin",
        "saanvi",
        "sai",
        "salman",
        "sameer",
        "sana",
        "sandeep",
        "sanjay",
        "santosh",
        "sarita",
        "saroj",
        "savita",
        "shankar",
        "shilpa",
        "shreya",
        "shweta",
        "siddharth",
        "simran",
        "sneha",
        "sonia",
        "srinivas",
        "subhash",
        "sudha",
        "suman",
        "sunil",
        "sunita",
        "suresh",
        "swati",
        "tanvi",
        "tanya",
        "tarun",
        "uma",
        "usha",
        "vani",
        "varun",
        "venkatesh",
        "vidya",
        "vihaan",
        "vijay",
        "vikas",
        "vikram",
        "vinay",
        "vinod",
        "vishal",
        "vivaan",
        "yash",
        "yogesh",
        "zoya",
        "suraj",
        "tejas",
        "rupa",
        "anu",
        "manju",
        "raghav",
        "raghu",
        "rajat",
        "ritika",
        "sakshi",
        "shalini",
        "shruti",
        "smita",
        "sushil",
        "umesh",
        "vandana",
        "varsha",
        "sharma",
        "verma",
        "gupta",
        "singh",
        "kumar",
        "patel",
        "shah",
        "mehta",
        "joshi",
        "iyer",
        "iyengar",
        "nair",
        "menon",
        "pillai",
        "reddy",
        "rao",
        "naidu",
        "chowdhury",
        "choudhary",
        "das",
        "bose",
        "banerjee",
        "chatterjee",
        "mukherjee",
        "ghosh",
        "dutta",
        "kulkarni",
        "deshpande",
        "patil",
        "jadhav",
        "pawar",
        "shinde",
        "gowda",
        "hegde",
        "shetty",
        "kamath",
        "pai",
        "bhat",
        "agarwal",
        "aggarwal",
        "jain",
        "malhotra",
        "kapoor",
        "khanna",
        "chopra",
        "arora",
        "bhatia",
        "sethi",
        "saxena",
        "srivastava",
        "tiwari",
        "mishra",
        "pandey",
        "dubey",
        "yadav",
        "chauhan",
        "rathore",
        "thakur",
        "khan",
        "ansari",
        "qureshi",
        "siddiqui",
        "sheikh",
        "naik",
        "prasad",
        "krishnan",
        "subramanian",
        "raman",
        "venkataraman",
        "mathew",
        "fernandes",
        "dsouza",
        "gill",
        "sandhu",
        "sidhu",
        "dhillon",
        "grewal",
        "bedi",
        "kohli",
        "tripathi",
        "dwivedi",
        "chaturvedi",
        "bhattacharya",
        "sarkar",
        "roy",
        "mondal",
        "nayak",
        "mohanty",
        "patnaik",
        "sahu",
        "goswami",
        "nambiar",
        "kurian",
        "varghese",
        "chandran",
        "rajan",
        "murthy",
        "shastri",
        "sinha",
        "trivedi",
        "vyas",
        "desai",
        "bhatt",
        "parikh",
        "modi",
        "ahuja",
        "bajaj",
        "luthra",
        "walia",
        "james",
        "john",
        "robert",
        "michael",
        "william",
        "david",
        "richard",
        "joseph",
        "charles",
        "thomas",
        "daniel",
        "matthew",
        "anthony",
        "paul",
        "steven",
        "andrew",
        "kenneth",
        "joshua",
        "kevin",
        "brian",
        "george",
        "edward",
        "mary",
        "patricia",
        "jennifer",
        "linda",
        "elizabeth",
        "barbara",
        "susan",
        "jessica",
        "sarah",
        "karen",
        "nancy",
        "lisa",
        "margaret",
        "sandra",
        "ashley",
        "emily",
        "michelle",
        "amanda",
        "melissa",
        "stephanie",
        "rebecca",
        "laura",
        "sharon",
        "cynthia",
        "kathleen",
        "anna",
        "maria",
        "olivia",
        "emma",
        "sophia",
        "noah",
        "liam",
        "oliver",
        "lucas",
        "ahmed",
        "omar",
        "hassan",
        "wei",
        "chen",
        "wang",
        "zhang",
        "liu",
        "yuki",
        "hiroshi",
        "kenji",
        "carlos",
        "juan",
        "jose",
        "luis",
        "miguel",
        "pedro",
        "ana",
        "sofia",
        "smith",
        "johnson",
        "williams",
        "jones",
        "garcia",
        "miller",
        "davis",
        "rodriguez",
        "martinez",
        "hernandez",
        "lopez",
        "gonzalez",
        "wilson",
        "anderson",
        "taylor",
        "moore",
        "jackson",
        "martin",
        "lee",
        "thompson",
        "harris",
        "clark",
        "lewis",
        "robinson",
        "walker",
        "allen",
        "wright",
        "scott",
        "adams",
        "nelson",
        "campbell",
        "mitchell",
        "roberts",
        "carter",
        "phillips",
        "evans",
        "turner",
        "torres",
        "parker",
        "collins",
        "edwards",
        "stewart",
        "morris",
        "murphy",
        "rogers",
        "morgan",
        "peterson",
        "cooper",
        "reed",
        "bailey",
        "kelly",
        "howard",
        "cox",
        "diaz",
        "richardson",
        "watson",
        "brooks",
        "bennett",
        "gray",
        "mueller",
        "muller",
        "schmidt",
        "schneider",
        "fischer",
        "weber",
        "meyer",
        "wagner",
        "becker",
        "nguyen",
        "tran",
        "kim",
    ]
)

# A listed name directly before one of these is part of a place: "Anna
# Nagar", "Gandhi Road" and "Lakshmi Layout" are zones, not people.
PLACE_WORDS = frozenset(
    [
        "nagar",
        "nagara",
        "road",
        "rd",
        "street",
        "st",
        "marg",
        "colony",
        "layout",
        "chowk",
        "circle",
        "cross",
        "main",
        "block",
        "sector",
        "puram",
        "pet",
        "peth",
        "palya",
        "halli",
        "bagh",
        "ganj",
        "place",
        "market",
        "hills",
        "hill",
        "park",
        "garden",
        "gardens",
        "enclave",
        "extension",
        "ext",
        "vihar",
        "bazaar",
        "bazar",
        "lane",
        "avenue",
        "ave",
        "square",
        "station",
        "junction",
        "bridge",
        "gate",
        "city",
        "town",
        "village",
        "hall",
        "halt",
        "stop",
        "depot",
        "lake",
    ]
)

# An honorific names whoever follows it, listed or not.
HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "dr", "shri", "sri", "smt", "kumari", "sir", "madam"})

# --- checksums -----------------------------------------------------------------------

_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
    (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
    (4, 0, 1, 2, 3, 9, 5, 6, 7, 8),
    (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2),
    (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
    (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 5, 7, 6, 2, 8, 3, 0, 9, 4),
    (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7),
    (9, 4, 5, 3, 1, 2, 6, 8, 7, 0),
    (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5),
    (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)


def verhoeff_valid(digits: str) -> bool:
    """True when the last digit is the Verhoeff check digit of the rest (as on Aadhaar)."""
    check = 0
    for position, digit in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[position % 8][int(digit)]]
    return check == 0


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# --- text patterns ----------------------------------------------------------------

# Digits may not touch a word character, a dot followed by a digit (a
# decimal), or a dash on the outside (an id such as BK-9876543210).
_OPEN = r"(?<![\w.+-])(?<!\w-)"
_CLOSE = r"(?![\w-]|\.\d)"

# The top-level domain starts with a letter, so "@12.97,77.59" in a map
# link is a place, not an address.
EMAIL = re.compile(
    r"(?<![\w.!#$%&*+/=?^`{|}~-])[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_][\w-]+",
    re.IGNORECASE,
)
# A UPI id is an e-mail without a dot in its domain: ramesh.k@okaxis, 9876543210@ybl.
UPI = re.compile(r"(?<![\w.-])[\w.-]{2,256}@[a-z][a-z0-9]{1,63}(?![\w@-]|\.\w)", re.IGNORECASE)

IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?!\w|\.\d)")
# Any run of hex digits and colons with at least two colons; ipaddress decides.
IPV6 = re.compile(
    r"(?<![\w:.])[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?::\d{1,3}(?:\.\d{1,3}){3})?(?!\w|[:.][0-9a-f])", re.IGNORECASE
)

# Exact coordinates: four or more decimals. A pair anywhere, or a single
# value right after a lat/lon label.
_EXACT = r"(?<![\w.-])(-?\d{1,3}\.\d{4,})(SEPARATOR)(-?\d{1,3}\.\d{4,})(?!\w|\.\d)"
# Comma-separated pairs first: in "score 0.1602 12.971599, 77.594566" the
# pair is the one with the comma.
COORDINATE_PAIRS = tuple(re.compile(_EXACT.replace("SEPARATOR", separator)) for separator in (r"\s*,\s*", r"\s+"))
LABELLED_COORDINATE = re.compile(
    r"\b(?:lat|lng|lon|long|latitude|longitude)\b([\"']?\s*[:=]?\s*[\"']?)(-?\d{1,3}\.\d{4,})(?!\w|\.\d)",
    re.IGNORECASE,
)

# Between two groups of digits any run of separators: spaces of any width
# (a no-break space is a space once normalised), dots, dashes and middle
# dots. "98450.12345", "98450 - 12345" and "2345\u00a06789\u00a01234" are
# grouped numbers like "98450 12345".
_SEP = r"[\s.\-\u2010-\u2015\u2212\u00b7]+"
_GAP = rf"(?:{_SEP})?"
# After a trunk or country prefix no dot: "0.98450 12345" is a decimal and a number.
_PREFIX_GAP = r"[^\S\n]*[\-\u2010-\u2015\u2212]?[^\S\n]*"


def _spaced(first: str, count: int | str) -> str:
    """Digits written one by one with separators between them ("9 8 4 5 0 …")."""
    return rf"{first}(?:{_SEP}\d){{{count}}}"


# A card is 13 to 19 digits: one run, or groups of four (Visa, MasterCard,
# RuPay), or 4-6-5 / 4-6-4 (Amex, Diners), or one digit at a time. Fixed
# groupings keep a neighbouring number from being read as part of the card.
CARD = re.compile(
    _OPEN
    + rf"(?:\d{{13,19}}|\d{{4}}{_SEP}\d{{4}}{_SEP}\d{{4}}{_SEP}\d{{1,7}}|\d{{4}}{_SEP}\d{{6}}{_SEP}\d{{4,5}}"
    + "|"
    + _spaced(r"\d", "12,18")
    + ")"
    + _CLOSE
)
AADHAAR = re.compile(_OPEN + rf"(?:[2-9]\d{{3}}{_GAP}\d{{4}}{_GAP}\d{{4}}|{_spaced('[2-9]', 11)})" + _CLOSE)

PHONE = re.compile(
    _OPEN + r"(?:"
    # International, E.164 with optional grouping: +44 20 7946 0958, +1 (415) 555-0100.
    # The last group has three digits or more, so "+44 20 7946 0958 12 min"
    # leaves the minutes alone.
    # Numbers written in pairs (+33 1 23 45 67 89) are tried first.
    rf"\+[1-9]\d{{0,3}}(?:{_SEP}\d{{1,2}}){{4,7}}(?!{_SEP}\d{{1,2}}(?!\w|\.\d))"
    r"|"
    # Any number written one digit at a time: +9 1 9 8 4 5 0 1 2 3 4 5.
    rf"\+{_spaced('[1-9]', '7,14')}"
    r"|"
    rf"\+[1-9]\d{{0,14}}(?:(?:{_SEP}(?:\(\d{{1,4}}\){_GAP})?\d{{1,10}})*{_SEP}(?:\(\d{{1,4}}\){_GAP})?\d{{3,10}})?"
    r"|"
    # Indian landline with its STD code: 080-2345 6789, (080) 23456789, 0124 234 5678.
    rf"\(?0\d{{2,4}}\)?{_GAP}\d{{3,4}}{_GAP}\d{{3,4}}|{_spaced('0', 10)}"
    r"|"
    # Indian mobile: 98450 12345, 0 98450-12345, 91 984 501 2345, (+91) 9845012345,
    # 9 8 4 5 0 1 2 3 4 5. Only the groupings people write, so "902343012 0"
    # stays two numbers.
    rf"(?:\(\+91\){_PREFIX_GAP}|91{_PREFIX_GAP}|9{_SEP}1{_SEP}|0{_PREFIX_GAP})?"
    rf"(?:[6-9](?:\d{{9}}|\d{{4}}{_SEP}\d{{5}}|\d{{2}}{_SEP}\d{{3}}{_SEP}\d{{4}}|\d{{3}}{_SEP}\d{{3}}{_SEP}\d{{3}}"
    rf"|\d{_SEP}\d{{4}}{_SEP}\d{{4}})|{_spaced('[6-9]', 9)})"
    r")" + _CLOSE
)

# Indian registration numbers: state, RTO, series, number (KA 01 AB 1234,
# DL3CAB1234) and the BH series (22 BH 1234 AA). "OR", the old Odisha code,
# is left out: "OR-10-1234" is far more often an order number.
_STATES = (
    "AN|AP|AR|AS|BR|CG|CH|DD|DL|DN|GA|GJ|HP|HR|JH|JK|KA|KL|LA|LD|MH|ML|MN|MP|MZ|NL|OD|PB|PY|RJ|SK|TG|TN|TR|TS|UK|UP|WB"
)
# Dashes outside are refused too: "dd4b0100-026b-…" is a UUID, not Daman's DD 4 B 0100.
VEHICLE = re.compile(
    r"(?<![a-z0-9-])(?:(?:" + _STATES + r")[ -]?\d{1,2}[ -]?(?:[a-z]{1,3}[ -]?)?\d{4}"
    r"|\d{2}[ -]?BH[ -]?\d{4}[ -]?[a-z]{1,2})(?![a-z0-9]|-[a-z0-9])",
    re.IGNORECASE,
)
PAN = re.compile(r"(?<![a-z0-9])[a-z]{3}[abcfghljptk][a-z]\d{4}[a-z](?![a-z0-9])", re.IGNORECASE)
IFSC = re.compile(r"(?<![a-z0-9])[a-z]{4}0[a-z0-9]{6}(?![a-z0-9])", re.IGNORECASE)

# A door: a house number before a street word (14 Residency Road, 221B Baker
# Street, 3/2 12th Main), or a flat/house/plot number.
_STREET = (
    r"road|rd|street|st|main|cross|lane|marg|layout|colony|avenue|ave|apartments?|society|enclave|vihar|"
    r"extension|nagar|block|sector|towers?"
)
# The words between number and street word are capitalised or numbers
# ("80 Feet Road", "3/2 12th Main"), which keeps "2 bookings in HSR Layout" a
# count and a zone.
ADDRESS = re.compile(
    r"(?<![\w/:.,-])(?:"
    r"\d{1,4}[A-Za-z]?(?:/\d{1,4}[A-Za-z]?)?,?(?:\s+(?:[A-Z][\w.'-]*|\d+(?:st|nd|rd|th)?)){0,3}"
    r"\s+(?i:" + _STREET + r")\b"
    r"|(?i:flat|house|door|plot|apt|h\.?\s?no\.?)\s*(?i:no\.?)?\s*[:#-]?\s*\d[\w/-]*"
    r")"
)

WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def digits_of(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _valid_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _valid_ipv6(text: str) -> bool:
    # A timestamp "20:57:00" has two colons and no "::"; only a real address
    # parses. A colon after the address ("at 2401:db8::1: the rider") is
    # punctuation, and goes with it.
    for candidate in (text, text[:-1] if text.endswith(":") else None):
        try:
            address = ipaddress.IPv6Address(candidate) if candidate else None
        except ValueError:
            continue
        if address is not None and not address.is_unspecified:
            return True
    return False


def _email(text: str) -> bool:
    # 'asha@example.in' is a quoted address: refused here, it is found again
    # one character on, without the quote. An address that is nothing but a
    # leading apostrophe ('@example.in) is taken whole.
    return not (text.startswith("'") and text[1] != "@")


def _card(text: str) -> bool:
    digits = digits_of(text)
    # Issuer prefixes: 2 and 5 MasterCard, 3 Amex/Diners/JCB, 4 Visa, 6
    # Discover/RuPay/Maestro, 8 RuPay. A leading 1 is left out, which keeps
    # millisecond timestamps from ever being read as cards.
    return digits[0] in "234568" and luhn_valid(digits)


def _aadhaar(text: str) -> bool:
    # "919845012345" is a mobile with its country code more often than an
    # Aadhaar number; the phone pattern masks it either way.
    if text.isdigit() and text.startswith("91") and text[2] in "6789":
        return False
    return verhoeff_valid(digits_of(text))


def _phone(text: str) -> bool:
    digits = digits_of(text)
    if text.lstrip("(").startswith("+"):
        return 8 <= len(digits) <= 15
    if digits.startswith("0"):
        # Trunk prefix plus a ten-digit national number, landline or mobile.
        return len(digits) == 11
    return len(digits) in (10, 12)


@dataclass(frozen=True, slots=True)
class TextRule:
    kind: str
    pattern: re.Pattern[str]
    # A match the check refuses is left alone and the scan moves on one
    # character, so a failed candidate never hides a real match after it.
    check: Callable[[str], bool] | None = None
    # The stable placeholder is per canonical value: "+91 98450 12345" and
    # "09845012345" are one phone.
    canonical: Callable[[str], str] = lambda text: " ".join(text.casefold().split())
    # Cheap preconditions: text with fewer digits, or without this character,
    # cannot match, and most strings in a tool result are skipped on them.
    min_digits: int = 0
    needs: str = ""


def phone_canonical(text: str) -> str:
    digits = digits_of(text)
    international = text.lstrip("( ").startswith("+")
    if (international or len(digits) == 12) and digits.startswith("91"):
        return digits[2:]
    if digits.startswith("0") and len(digits) == 11:
        return digits[1:]
    return digits


def _only_digits(text: str) -> str:
    return digits_of(text)


def _ipv6_canonical(text: str) -> str:
    return text.removesuffix(":").casefold() if not text.endswith("::") else text.casefold()


def _upper_compact(text: str) -> str:
    return re.sub(r"[\s-]", "", text).upper()


# The order matters: an e-mail before a UPI id and a phone (9876543210@ybl.in),
# addresses before identifiers (a house number is not a phone), cards and
# Aadhaar before phones (both are longer digit runs).
TEXT_RULES: tuple[TextRule, ...] = (
    TextRule("email", EMAIL, _email, needs="@"),
    TextRule("upi", UPI, needs="@"),
    TextRule("ip", IPV4, _valid_ipv4, min_digits=4, needs="."),
    TextRule("ip", IPV6, _valid_ipv6, _ipv6_canonical, needs=":"),
    TextRule("card", CARD, _card, _only_digits, min_digits=13),
    TextRule("aadhaar", AADHAAR, _aadhaar, _only_digits, min_digits=12),
    TextRule("phone", PHONE, _phone, phone_canonical, min_digits=8),
    TextRule("vehicle", VEHICLE, None, _upper_compact, min_digits=4),
    TextRule("pan", PAN, None, str.upper, min_digits=4),
    TextRule("ifsc", IFSC, None, str.upper, needs="0"),
    TextRule("address", ADDRESS, min_digits=1),
)
