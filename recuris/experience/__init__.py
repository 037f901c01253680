"""The experience layer above the core: what the product adds to the documents' agent.

settling leaves out past tasks that contradict each other where the query's words side
against them; agent extends the core's `RecurisAgent` through the methods its loop calls:
injected experience, context sections, tools and slot values; slots is the grammar of those
values, and slot_llm the mock model that fills them. The manager runs its agent.
"""
