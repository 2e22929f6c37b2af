/** An address, then the code mailed to it: the e-mail step of signing in and of linking an address. */
import { useState } from "preact/hooks";
import { sendEmailCode } from "@client/identity";
import { publicApi } from "../backend";
import { Field, Form, type useAction } from "../ui";

type Labels = { email: string; code: string; send: string; use: string };

export function EmailCodeForm({ act, names, labels, onCode }: { act: ReturnType<typeof useAction>; names: [string, string]; labels: Labels; onCode: (email: string, code: string) => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [code, setCode] = useState("");
  const [codeSent, setCodeSent] = useState(false);
  const submit = () =>
    act.run(async () => {
      if (!codeSent) {
        await sendEmailCode(publicApi(), email.trim());
        return setCodeSent(true);
      }
      await onCode(email.trim(), code.trim());
      setCodeSent(false);
      setEmail("");
      setCode("");
    });
  return (
    <Form onSubmit={submit}>
      <Field label={labels.email} name={names[0]} type="email" value={email} onInput={setEmail} required />
      {codeSent && <Field label={labels.code} name={names[1]} value={code} onInput={setCode} required />}
      <button class="primary" disabled={act.busy}>{codeSent ? labels.use : labels.send}</button>
    </Form>
  );
}
