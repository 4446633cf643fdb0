/**
 * Sends one e-mail. The Message-ID derives from the job, so a retry after a crash resends
 * the same message rather than a second, different one.
 */
import { emailsSend } from "../../shared/jobs/kinds.ts";
import { deliverMail } from "../../shared/mail/deliver.ts";
import { renderMail } from "../../shared/mail/templates.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(emailsSend, async (payload, { deps, jobId }) => {
  const link = payload.link?.startsWith("/") ? `${deps.config.frontendUrl}${payload.link}` : payload.link;
  const rendered = renderMail(payload.kind, payload.locale, payload.params, link);
  const result = await deliverMail(deps, {
    ...rendered,
    to: payload.to,
    id: `job-${jobId ?? "cron"}-${payload.kind}`,
    ...(link ? { link } : {}),
  });
  return { via: result.via, kind: payload.kind };
});
