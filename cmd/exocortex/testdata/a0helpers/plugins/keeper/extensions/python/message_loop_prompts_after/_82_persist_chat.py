# Fixture written for Exocortex's tests: helpers.persist_chat, a chat's
# message files beside the host's session.
import os

from helpers.extension import Extension
from helpers import files, persist_chat
from agent import LoopData


class PersistNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        folder = persist_chat.get_chat_msg_files_folder(self.agent.context.id)
        os.makedirs(folder, exist_ok=True)
        path = files.get_abs_path(folder, f"{len(os.listdir(folder)) + 1}.txt")
        files.write_file(path, f"keeper note of iteration {loop_data.iteration}")
        persist_chat.save_tmp_chat(self.agent.context)
        loop_data.extras_temporary["keeper_persist"] = (
            f"A0-MARKER-persist in_plugin={files.is_in_dir(path, files.get_base_dir())} "
            f"chats={len(persist_chat.saved_chat_ids())}"
        )
