"""A LoCoMo conversation in miniature, for the tests of the loader and of the locomo command.

Two sessions of turns and a third whose turns were not released; four questions, two of
which the loader keeps (LC2).
"""

CONVERSATION = {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_1_date_time": "1:00 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy last week!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! What breed is it?"},
        {
            "speaker": "Ana",
            "dia_id": "D1:3",
            "text": "A beagle named Biscuit.",
            "blip_caption": "a photo of a dog",
        },
    ],
    "session_2_date_time": "2:00 pm on 9 May, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "I started learning the violin."},
        {"speaker": "Ana", "dia_id": "D2:2", "text": "Violin is hard, keep practicing!"},
    ],
    "session_3_date_time": "a session whose turns were not released",
    "qa": [
        {
            "question": "What breed is Ana's dog?",
            "answer": "beagle",
            "evidence": ["D1:3"],
            "category": 4,
        },
        {
            "question": "What instrument is Ben learning?",
            "answer": "violin",
            "evidence": ["D2:1"],
            "category": 1,
        },
        {"question": "Would Ana like cats?", "answer": "unknown", "evidence": [], "category": 3},
        {
            "question": "What is Ben's cat called?",
            "answer": "none",
            "evidence": ["D1:2"],
            "category": 5,
        },
    ],
}
