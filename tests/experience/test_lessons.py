"""Example tests for recuris.experience.lessons: contradicted lessons are contested (LS1-LS3)."""

from recuris import EpisodicMemory, RetrievalSettings
from recuris.core.prompt import CONTESTED
from recuris.core.records import Episode, Hit, Step
from recuris.experience.lessons import (
    ContestedHit,
    Lesson,
    at_step,
    contest,
    lesson_fact,
    lesson_of,
    read_lesson,
    recall_lessons,
    to_consolidate,
)
from recuris.experience import lessons
from recuris.experience.settling import retrieve_settled


def task(goal, at, *steps, key=None):
    """A hit for a past task created at `at`, whose steps are (action, failed) pairs."""
    trajectory = tuple(
        Step(number, action, "error" if failed else "ok", failed)
        for number, (action, failed) in enumerate(steps, start=1)
    )
    failed = steps[-1][1]
    episode = Episode(
        task_type="cdn",
        goal=goal,
        status="failed" if failed else "success",
        id=key or f"{goal}@{at}",
        trajectory=trajectory,
        failure_reason="error" if failed else "",
        created_at=at,
    )
    return Hit(0.5, episode)


def alike(lesson, other):
    return True


def test_a_lesson_a_later_success_in_its_situation_contradicts_is_contested():
    """LS1, LS2: purge failed on day 1, worked after the same steps on day 2: contested,
    the newest outcome first."""
    lesson = task("purge the cache", 1, ("find paths", False), ("purge by API", True))
    later = task("clear the cache", 2, ("find paths", False), ("purge by API", False))
    shown = contest([lesson], [lesson, later], alike)
    assert isinstance(shown[0], ContestedHit)
    assert shown[0].outcomes == (("clear the cache", True), ("purge the cache", False))
    assert shown[0].render().startswith(f'{CONTESTED} "purge by API", newest first: worked')


def test_an_earlier_success_does_not_contest_a_lesson():
    """LS1: the success came before the failure: the lesson stands as a path to avoid."""
    earlier = task("clear the cache", 1, ("find paths", False), ("purge by API", False))
    lesson = task("purge the cache", 2, ("find paths", False), ("purge by API", True))
    assert contest([lesson], [earlier, lesson], alike) == [lesson]


def test_a_success_after_other_steps_does_not_contest_a_lesson():
    """LS1: the later task did the action after other steps: another situation."""
    lesson = task("purge the cache", 1, ("find paths", False), ("purge by API", True))
    later = task("clear the cache", 2, ("log in", False), ("purge by API", False))
    assert contest([lesson], [lesson, later], alike) == [lesson]


def test_a_success_whose_goal_is_not_similar_does_not_contest_a_lesson():
    """LS1: the later task's goal does not pass the threshold against the lesson's."""
    lesson = task("purge the cache", 1, ("find paths", False), ("purge by API", True))
    later = task("clear the cache", 2, ("find paths", False), ("purge by API", False))
    assert contest([lesson], [lesson, later], lambda one, other: False) == [lesson]


def test_a_failure_after_the_success_comes_first_among_the_outcomes():
    """LS2: failed, worked, failed again: contested, the newest outcome a failure."""
    first = task("purge the cache", 1, ("find paths", False), ("purge by API", True))
    worked = task("clear the cache", 2, ("find paths", False), ("purge by API", False))
    again = task("flush the cache", 3, ("find paths", False), ("purge by API", True))
    shown = contest([first], [first, worked, again], alike)
    assert [worked for _, worked in shown[0].outcomes] == [False, True, False]


def test_recall_lessons_returns_the_settled_episodes_in_order():
    """LS3: the same episodes, in the same order, as `retrieve_settled`."""
    memory = EpisodicMemory()
    for hit in (
        task("purge the marketing cache", 1, ("find paths", False), ("purge by API", True)),
        task("purge the docs cache", 2, ("find paths", False), ("purge by API", False)),
        task("purge the blog cache", 3, ("find paths", False), ("purge by API", False)),
    ):
        memory.add_episode(hit.episode)
    query = "cdn purge the shop cache"
    retrieval = RetrievalSettings(top_k=2, threshold=0.1)
    recalled = recall_lessons(memory, query, retrieval)
    settled = retrieve_settled(memory, query, retrieval)
    assert [hit.episode.id for hit in recalled] == [hit.episode.id for hit in settled]
    without = recall_lessons(memory, query, retrieval, contesting=False)
    assert without == settled


def test_a_consolidated_lesson_is_as_near_as_its_nearest_goal():
    """LS3, LS1: a lesson learned in many phrasings is recalled, and alike to a past task, by
    its goal nearest the query, not by all its goals read as one text."""
    goals = (
        "purge the shop cache",
        "flush the edge nodes after the pricing change",
        "clear the cached pages of the docs portal",
        "empty the wiki's stale renders",
    )
    fact = Lesson("cdn", ("find paths",), "purge by api", goals, ("a", "b", "c", "d"))
    lesson = read_lesson("fact", *lesson_fact(fact), 0.0)
    memory = EpisodicMemory()
    retrieval = RetrievalSettings(top_k=2, threshold=0.5)
    consolidated = [(lesson, fact.sources)]
    [hit] = recall_lessons(memory, "cdn purge the shop cache", retrieval, consolidated=consolidated)
    assert hit.episode is lesson and hit.score == 1.0
    shop = task("purge the shop cache", 2, ("find paths", False), ("purge by API", False))
    assert lessons.alike(memory, 0.5, {lesson.id})(lesson, shop.episode)
    memory.add_episode(shop.episode)
    assert lessons.alike(memory, 0.5, {lesson.id})(lesson, shop.episode)
    assert not lessons.alike(memory, 0.5)(lesson, shop.episode)


def test_a_goal_holding_the_separator_is_one_goal_unless_a_consolidated_lesson():
    """LS1: an episode whose goal holds " | " (a shell pipe) is read whole; only a
    consolidated lesson's value is read as several goals."""
    piped = task("tail app.log | grep error", 1, ("find paths", False), ("purge by API", True))
    grep = task("grep error", 2, ("find paths", False), ("purge by API", False))
    assert not lessons.alike(EpisodicMemory(), 0.6)(piped.episode, grep.episode)
    assert lessons.alike(EpisodicMemory(), 0.6, {piped.episode.id})(piped.episode, grep.episode)


def failures_at_two_steps():
    """A memory of two failed purges: one at the first step, one after finding paths."""
    memory = EpisodicMemory()
    for hit in (
        task("purge the shop cache", 1, ("log in by password", True)),
        task("purge the blog cache", 2, ("find paths", False), ("purge by API", True)),
    ):
        memory.add_episode(hit.episode)
    return memory


def test_the_lessons_about_the_step_at_hand_come_beside_the_top_k():
    """LS6: beyond the top k, a lesson that failed after exactly the actions done is shown,
    one at another step is not."""
    retrieval = RetrievalSettings(top_k=1, threshold=0.1)
    query = "cdn purge the shop cache"
    plain = recall_lessons(failures_at_two_steps(), query, retrieval)
    assert [hit.episode.goal for hit in plain] == ["purge the shop cache"]
    start = recall_lessons(failures_at_two_steps(), query, retrieval, step=())
    assert [hit.episode.goal for hit in start] == ["purge the shop cache"]
    later = recall_lessons(failures_at_two_steps(), query, retrieval, step=("find paths",))
    assert [hit.episode.goal for hit in later] == ["purge the shop cache", "purge the blog cache"]


def test_a_lesson_the_shown_hits_already_state_is_not_added_again():
    """LS6: of lessons failing at one action after the same actions, only the first shows."""
    lesson = task("purge the docs cache", 1, ("purge by API", True))
    again = task("purge the blog cache", 2, ("purge by API", True))
    other = task("purge the wiki cache", 3, ("use the console", True))
    assert at_step([again, other], (), [lesson]) == [other]
    assert at_step([lesson, again], (), []) == [lesson]


def read_back(lesson, at=0.0):
    """A lesson stored as a fact seen once, read back as the episode it stands for."""
    subject, value = lesson_fact(lesson, once=True)
    return read_lesson("fact", subject, value, at, once=True)


def test_a_failed_episode_teaches_a_lesson_seen_once_and_a_success_none():
    """LS7: the lesson seen once is the failure's situation, its goal and its id."""
    failed = task("purge the cache", 1, ("find paths", False), ("purge by API", True)).episode
    worked = task("purge the cache", 2, ("find paths", False), ("purge by API", False)).episode
    assert lesson_of(failed) == Lesson(
        "cdn", ("find paths",), "purge by api", ("purge the cache",), (failed.id,)
    )
    assert lesson_of(worked) is None


def test_a_lesson_is_read_back_only_as_its_own_kind():
    """LS5, LS7: a fact of a lesson seen once is no consolidated lesson, and the other way;
    both have the same subject, so that the consolidated lesson supersedes the other."""
    failed = task("purge the cache", 1, ("find paths", False), ("purge by API", True)).episode
    lesson = lesson_of(failed)
    assert read_back(lesson).failed_step.action == "purge by api"
    assert read_back(lesson).goal == "purge the cache"
    subject, value = lesson_fact(lesson, once=True)
    assert read_lesson("fact", subject, value, 0.0) is None
    consolidated, value = lesson_fact(lesson)
    assert read_lesson("fact", consolidated, value, 0.0, once=True) is None
    assert consolidated == subject


def test_a_goal_that_begins_with_the_seen_once_words_reads_back_as_stored():
    """LS7: a consolidated lesson whose first goal begins with "seen once: " is read back as
    consolidated, with that goal whole; a value stored without a mark reads as consolidated."""
    failed = task("seen once: the cache", 1, ("find paths", False), ("purge by API", True))
    subject, value = lesson_fact(lesson_of(failed.episode))
    assert read_lesson("fact", subject, value, 0.0, once=True) is None
    assert read_lesson("fact", subject, value, 0.0).goal == "seen once: the cache"
    assert read_lesson("fact", subject, "purge the cache", 0.0).goal == "purge the cache"


def test_a_lesson_seen_once_recurs_after_its_episode_is_forgotten():
    """LS4: the pool holds nothing (the first failure forgotten); the lesson seen once, in the
    same situation with goals alike, makes the second failure a lesson citing both."""
    first = task("purge the cache", 1, ("find paths", False), ("purge by API", True)).episode
    again = task("purge the CDN cache", 40, ("find paths", False), ("purge by API", True))
    earlier = read_back(lesson_of(first))
    [lesson] = to_consolidate(again.episode, (), [], alike, [(earlier, (first.id,))])
    assert lesson.sources == (first.id, again.episode.id)
    assert lesson.goals == ("purge the cache", "purge the CDN cache")


def test_a_lesson_seen_once_in_another_situation_does_not_recur():
    """LS4: a failure at the same action after other steps is another lesson."""
    first = task("purge the cache", 1, ("find paths", False), ("purge by API", True)).episode
    again = task("purge the cache", 40, ("purge by API", True))
    earlier = read_back(lesson_of(first))
    assert to_consolidate(again.episode, (), [], alike, [(earlier, (first.id,))]) == []


def test_a_lesson_seen_once_and_contradicted_since_does_not_recur():
    """LS4: a task that did the action after the same steps since the lesson was seen (the
    world changed) contests it: the next failure there starts a lesson of its own."""
    first = task("purge the cache", 1, ("find paths", False), ("purge by API", True)).episode
    worked = task("purge the cache", 20, ("find paths", False), ("purge by API", False))
    again = task("purge the cache", 40, ("find paths", False), ("purge by API", True))
    earlier = read_back(lesson_of(first), at=1.0)
    pool = [worked]
    assert to_consolidate(again.episode, (), pool, alike, [(earlier, (first.id,))]) == []
