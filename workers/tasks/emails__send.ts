/**
 * Sends one e-mail. The Message-ID derives from the job, so a retry after a crash resends
 * the same message rather than a second, different one.
 */
import { emailsSend } from "../../shared/jobs/kinds.ts";
import { deliverMail } from "../../shared/mail/deliver.ts";
import { renderMail } from "../../shared/mail/templates.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(emailsSend, async (payload, { deps, jobId }) => {
  const rendered = renderMail(payload.kind, payload.locale, payload.params, payload.link);
  const result = await deliverMail(deps, {
    ...rendered,
    to: payload.to,
    id: `job-${jobId ?? "cron"}-${payload.kind}`,
    ...(payload.link ? { link: payload.link } : {}),
  });
  return { via: result.via, kind: payload.kind };
});
