// The official openai client against exocortex serve: one completion not
// streamed and one streamed, in the session named by the user field. It
// prints one JSON object with what the client got; the Go test asserts it.
//
//   OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 OPENAI_API_KEY=KEY node client.mjs
import OpenAI from "openai";

const client = new OpenAI(); // OPENAI_BASE_URL and OPENAI_API_KEY from the environment
const out = {};

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

const whole = await client.chat.completions.create({
  model: "exocortex",
  user: "npm-client",
  messages: [{ role: "user", content: "first question" }],
});
out.whole = { content: whole.choices[0].message.content, finish: whole.choices[0].finish_reason, object: whole.object };

const stream = await client.chat.completions.create({
  model: "exocortex",
  user: "npm-client",
  stream: true,
  messages: [
    { role: "user", content: "first question" },
    { role: "assistant", content: whole.choices[0].message.content },
    { role: "user", content: "second question" },
  ],
});
let content = "";
let progress = "";
let finish = null;
let chunks = 0;
for await (const chunk of stream) {
  chunks++;
  const c = chunk.choices[0];
  content += c.delta.content ?? "";
  progress += c.delta.reasoning_content ?? "";
  if (c.finish_reason) finish = c.finish_reason;
}
out.stream = { content, progress, finish, chunks };

try {
  await new OpenAI({ apiKey: "wrong-key" }).models.list();
  out.wrongKey = "accepted";
} catch (e) {
  out.wrongKey = e.status;
}
console.log(JSON.stringify(out));
