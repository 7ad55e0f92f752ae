"""The phrasings of the offline writer: several ways to say each construct of a record.

The record's rng picks one each time, so a run reads varied. Placeholders: ``{clause}`` a request
("book a table for 2"), ``{ref}`` the earlier result a request uses ("the latitude"), ``{task}`` what
a call does ("book a table"), ``{error}`` what a failure said, ``{tools}`` what the offered tools do,
``{value}`` the name of a missing value. A phrasing that links a request to an earlier result
("then", "use that") is in :data:`WIRED` only: a request without a value flowing in never says it.
"""

from __future__ import annotations

__all__ = [
    "ALSO",
    "ANSWER_CLOSERS",
    "ANSWER_OPENERS",
    "APPROVE",
    "ASK_MISSING",
    "CLOSERS",
    "CONFIRM",
    "DECLINE",
    "DECLINED",
    "FAILED",
    "FRAMES",
    "GET_FRAMES",
    "GET_VERBS",
    "INSTEAD",
    "NO_TOOL",
    "OPENERS",
    "REFS",
    "SYNONYMS",
    "UNWIRED",
    "WIRED",
]

OPENERS: tuple[str, ...] = (
    "",
    "",
    "",
    "",
    "Hi!",
    "Hey,",
    "Hello.",
    "Hi there,",
    "Quick one:",
    "Okay,",
    "So,",
    "Morning!",
)
OPENERS += (
    "Hey there!",
    "Good morning.",
    "Hello!",
    "Quick request:",
    "I need a hand.",
    "Hi, hope you're well.",
)
CLOSERS: tuple[str, ...] = (
    "",
    "",
    "",
    "",
    "Thanks!",
    "Thank you.",
    "Thanks in advance.",
    "Cheers.",
    "Appreciate it.",
)
CLOSERS += ("Thanks a lot!", "Much appreciated.", "That would be great.", "Thanks so much.", "Cheers!")
#: (prefix, end) around a clause ("{prefix} {clause}{end}"); an empty prefix makes an imperative.
FRAMES = (
    ("can you", "?"),
    ("could you", "?"),
    ("would you", "?"),
    ("could you please", "?"),
    ("please", "."),
    ("I need you to", "."),
    ("I'd like you to", "."),
    ("help me", "."),
    ("I want to", "."),
    ("I'd like to", "."),
    ("would you mind helping me", "?"),
    ("I was hoping you could", "."),
    ("is it possible to", "?"),
    ("do me a favour and", "."),
    ("", ", please."),
    ("", "."),
)
#: Frames around an object alone, for requests that only fetch information.
GET_FRAMES = (
    ("what's", "?"),
    ("can you get me", "?"),
    ("I need", "."),
    ("show me", "."),
    ("could you look up", "?"),
    ("I'd like to know", "."),
    ("please pull up", "."),
    ("tell me", "."),
    ("give me", "."),
    ("do you know", "?"),
    ("I'm curious about", "."),
    ("find out", "."),
    ("I'd love to see", "."),
)
GET_VERBS = ("get", "look up", "find", "check", "pull up", "get", "fetch", "find out")
#: Other ways to say a purpose's verb (the first is the verb itself).
SYNONYMS = {
    "create": ("create", "set up", "make"),
    "delete": ("delete", "remove", "get rid of"),
    "remove": ("remove", "delete", "get rid of"),
    "calculate": ("calculate", "work out", "figure out", "compute"),
    "compute": ("compute", "work out", "calculate"),
    "find": ("find", "track down", "look up"),
    "book": ("book", "reserve"),
    "modify": ("modify", "change", "update"),
    "update": ("update", "change"),
    "generate": ("generate", "make", "create"),
    "determine": ("determine", "work out", "figure out"),
    "estimate": ("estimate", "work out"),
    "check": ("check", "verify"),
    "list": ("list", "show"),
}
#: Between two requests of one step (the calls run together).
ALSO = (", and also ", " and also ", ", and ", "; also ", ", plus ", ", and at the same time ", "; and ")
#: A later request that uses an earlier result; {ref} names the value.
WIRED = (
    "Then use {ref} to {clause}.",
    "Once you have {ref}, {clause}.",
    "After that, take {ref} and {clause}.",
    "Then {clause} with {ref}.",
    "Use {ref} to {clause} after that.",
    "Take {ref} and {clause}.",
    "When that's done, use {ref} to {clause}.",
    "Then, with {ref}, {clause}.",
)
#: A later request whose values the user said before (an earlier result repeats them): it follows
#: on, and names the thing again ("Then delete that pet.").
ECHOED = (
    "Then {clause}.",
    "After that, {clause}.",
    "When that's done, {clause}.",
    "Once that's done, {clause}.",
    "And then {clause}.",
    "Then please {clause}.",
)
#: A later request that takes nothing from the earlier ones: no "then", no "use that".
UNWIRED: tuple[str, ...] = (
    "Also, {clause}.",
    "Separately, {clause}.",
    "On top of that, {clause}.",
    "And {clause} too.",
)
UNWIRED += ("I'd also like you to {clause}.", "One more thing: {clause}.", "While you're at it, {clause}.")
UNWIRED += (
    "In addition, {clause}.",
    "Oh, and {clause}.",
    "Could you also {clause}?",
    "Can you also {clause}?",
)
#: How a later request names an earlier result when no output is named.
REFS = ("that", "it", "the result", "what you find")

ANSWER_OPENERS: tuple[str, ...] = (
    "",
    "",
    "",
    "Here's what I found.",
    "All done.",
    "Okay!",
    "Sure.",
    "Here you go.",
    "Done!",
)
ANSWER_OPENERS += ("Alright.", "Got it.", "Here's the rundown.")
ANSWER_CLOSERS: tuple[str, ...] = (
    "",
    "",
    "",
    "Let me know if you need anything else.",
    "Anything else?",
    "Hope that helps!",
)
ANSWER_CLOSERS += ("Is there anything else I can do?", "Just say if you need more.")
FAILED = (
    "I couldn't {task}: the service said {error}.",
    "I tried to {task}, but it failed ({error}).",
    "Sorry, I wasn't able to {task}. The service reported: {error}.",
    "Unfortunately I couldn't {task}, because {error}.",
    "Something went wrong when I tried to {task}: {error}.",
)
DECLINED = (
    "As you asked, I didn't {task}.",
    "Okay, I won't {task}.",
    "I've left it: I didn't {task}, as you said.",
    "Understood, I did not {task}.",
    "No problem, I haven't gone ahead and {task_done}.",
)
CONFIRM = (
    "Just to confirm: you want me to {task}?",
    "I'm about to {task}. Shall I go ahead?",
    "Before I {task}, can you confirm that's right?",
    "This will {task}. OK to proceed?",
    "I'll {task}. Do you want me to go ahead?",
    "Can you confirm you'd like me to {task}?",
)
APPROVE: tuple[str, ...] = (
    "Yes, go ahead.",
    "Yes please.",
    "Confirmed.",
    "Sure, do it.",
    "That's right, go ahead.",
    "Yes.",
)
APPROVE += ("Go for it.", "Yep, that's correct.")
DECLINE: tuple[str, ...] = (
    "No, don't do that.",
    "Actually, no. Leave it.",
    "Hold off on that, please.",
    "No, cancel that.",
)
DECLINE += ("Let's not, thanks.", "On second thought, no.")
NO_TOOL = (
    "Sorry, I can't help with that: I don't have a tool that can {task}.",
    "I'm afraid I can't {task}; none of my tools does that.",
    "That's not something I can do here, since I have no way to {task}.",
    "Unfortunately I'm not able to {task} with the tools I have.",
    "I can't {task}, I'm afraid: that's outside what my tools cover.",
)
INSTEAD: tuple[str, ...] = (
    "What I can do is {tools}.",
    "I can {tools}, if that helps.",
    "I'm able to {tools} instead.",
)
INSTEAD += ("If it's useful, I can {tools}.",)
ASK_MISSING = (
    "I can {task}, but I need the {value} first. What is it?",
    "Sure, which {value} should I use?",
    "Could you tell me the {value}? I need it to {task}.",
    "Happy to help. What's the {value}?",
    "To {task}, I'll need the {value}. Can you give it to me?",
    "Sure thing. What {value} do you have in mind?",
)
# A value left out that has a few choices: the question offers them.
ASK_CHOICE = (
    "I can {task}. Which {value} would you like: {choices}?",
    "Sure, which {value} should I use, {choices}?",
    "Happy to help. Should the {value} be {choices}?",
)
ASK_CHOICE_UNNAMED = (
    "Sure. Should I use {choices}?",
    "I can {task}. Which would you like: {choices}?",
    "Happy to help. Would you like {choices}?",
)
ASK_DETAIL = (
    "I can {task}, but I need one more detail first. Could you give me the rest of the request?",
    "Happy to help, but part of the request is missing. What exactly should I use?",
)
