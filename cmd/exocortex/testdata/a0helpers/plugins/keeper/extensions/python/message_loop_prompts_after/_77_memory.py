# Fixture written for Exocortex's tests: the memory plugin's Memory on
# Exocortex's memory store (insert, search with an Agent Zero filter, forget).
from helpers.extension import Extension
from agent import LoopData
from plugins._memory.helpers.memory import Memory
from plugins._memory.tools.memory_load import DEFAULT_THRESHOLD


class MemoryNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        if self.agent.get_data("keeper_memory_done"):
            return
        self.agent.set_data("keeper_memory_done", True)
        db = await Memory.get(self.agent)
        kept = await db.insert_text(
            text="the keeper's code word is heliotrope",
            metadata={"area": Memory.Area.FRAGMENTS.value},
        )
        await db.insert_text(text="the keeper likes quiet mornings", metadata={"area": Memory.Area.MAIN.value})
        found = await db.search_similarity_threshold(
            query="keeper code word heliotrope",
            limit=5,
            threshold=0.1,
            filter=f"area == '{Memory.Area.FRAGMENTS.value}'",
        )
        plain = Memory.format_docs_plain(found)
        gone = await db.delete_documents_by_query(
            query="keeper code word heliotrope", threshold=0.1, filter=f"area == '{Memory.Area.FRAGMENTS.value}'"
        )
        after = await db.search_similarity_threshold(
            query="keeper code word heliotrope", limit=5, threshold=0.1, filter="area == 'fragments'"
        )
        loop_data.extras_persistent["keeper_memory"] = (
            f"A0-MARKER-memory found={[d.page_content for d in found]} area={found[0].metadata.get('area') if found else None} "
            f"plain={'Content: the keeper' in plain[0] if plain else False} forgot={len(gone)} after={len(after)} "
            f"key={kept.startswith('a0-')} default={DEFAULT_THRESHOLD}"
        )
