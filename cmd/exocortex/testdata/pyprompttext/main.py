"""pyprompttext: a fixture that recognises the core's repeat message by its text.

The mistake a port from Agent Zero makes (REPEAT_SIGNAL = "LOOP DETECTED."):
comparing the message's wording instead of its signal, signals.REPEAT. The
wiring lint finds the prompt's opening in this source (EXO017).
"""

import exocortex as exo


class RepeatWatcher:
    def spec(self):
        return exo.Spec(name="repeat_watcher", order=60, description="Notices repeated replies.")

    def hist_add_before(self, call, req):
        if req.message.content.startswith("Your reply is word for word the same"):
            call.logger.info("the model repeats itself")
        return None


def plugin():
    return exo.Plugin(name="pyprompttext", version="test", extensions=[RepeatWatcher()])


if __name__ == "__main__":
    exo.serve(plugin())
