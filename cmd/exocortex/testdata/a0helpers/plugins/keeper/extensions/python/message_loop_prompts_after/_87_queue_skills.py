# Fixture written for Exocortex's tests: helpers.message_queue, skills,
# mcp_handler, notification and the agent module's types.
from helpers.extension import Extension
from helpers import message_queue as mq, skills
from helpers.mcp_handler import MCPConfig
from helpers.notification import NotificationManager, NotificationType
from agent import LoopData, AgentContextType, UserMessage


class QueueSkillsNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        ctx = self.agent.context
        empty = mq.has_queue(ctx) is False and mq.send_next(ctx) is False
        mq.add(ctx, "queued hello")
        try:
            mq.send_next(ctx)
            refused = "no"
        except mq.NoCounterpart:
            refused = "yes"
        first = mq.pop_first(ctx)["text"]
        found = [s.name for s in skills.list_skills(agent=self.agent)]
        loaded = skills.load_skill_for_agent("shelf-keeping", agent=self.agent).splitlines()[0]
        NotificationManager.send_notification(type=NotificationType.WARNING, message="A0-LOG-notification from the keeper")
        msg = UserMessage(message="hi")
        loop_data.extras_temporary["keeper_queue"] = (
            f"A0-MARKER-queue empty={empty} refused={refused} first={first} skills={found} loaded={loaded} "
            f"mcp={len(MCPConfig.get_instance().servers)} user={ctx.type == AgentContextType.USER} msg={msg.message}"
        )
