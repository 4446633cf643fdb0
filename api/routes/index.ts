/**
 * Every route of the API, in one list: the router and the OpenAPI document are built from it.
 */
import type { RouteSpec } from "./route.ts";
import "../../shared/projects/areas.ts";
import { broadcastingRoutes } from "./broadcasting/broadcasting.router.ts";
import { jobRoutes } from "./jobs/jobs.router.ts";
import { systemRoutes } from "./system/system.router.ts";
import { emailRoutes } from "./auth/email.router.ts";
import { loginRoutes } from "./auth/login.router.ts";
import { passwordRoutes } from "./auth/password.router.ts";
import { tokenRoutes } from "./auth/tokens.router.ts";
import { twoFactorRoutes } from "./auth/twoFactor.router.ts";
import { profileRoutes } from "./profile/profile.router.ts";
import { sellerRoutes } from "./profile/seller.router.ts";
import { adminUserRoutes } from "./admin/users.router.ts";
import { adminConsoleRoutes } from "./admin/console.router.ts";
import { adminJobRoutes } from "./admin/jobs.router.ts";
import { auditLogRoutes } from "./admin/auditLog.router.ts";
import { adminSettingsRoutes } from "./admin/settings.router.ts";
import { settingsRoutes } from "./settings/settings.router.ts";
import { pushRoutes } from "./push/push.router.ts";
import { languageRoutes } from "./languages/languages.router.ts";
import { performanceRoutes } from "./usage/performance.router.ts";
import { visitRoutes } from "./usage/visits.router.ts";
import { supportTicketRoutes } from "./support/tickets.router.ts";
import { adminSupportTicketRoutes } from "./support/adminTickets.router.ts";
import { projectRoutes } from "./projects/projects.router.ts";
import { projectStateRoutes } from "./projects/state.router.ts";
import { bundleRoutes } from "./projects/bundle.router.ts";
import { subscriptionRoutes } from "./projects/subscriptions.router.ts";
import { teamRoutes } from "./teams/teams.router.ts";
import { memberRoutes } from "./teams/members.router.ts";
import { invitationRoutes } from "./teams/invitations.router.ts";
import { schemaRoutes } from "./schemas/schemas.router.ts";
import { schemaExchangeRoutes } from "./schemas/exchange.router.ts";
import { sqlParseRoutes } from "./schemas/sqlParse.router.ts";
import { translationRoutes } from "./schemas/translations.router.ts";
import { autoTranslateRoutes } from "./schemas/autoTranslate.router.ts";
import { templateRoutes } from "./templates/templates.router.ts";
import { topLevelTemplateRoutes } from "./templates/topLevel.router.ts";
import { variableRoutes } from "./templates/variables.router.ts";
import { fileRoutes } from "./templates/files.router.ts";
import { templateToolRoutes } from "./templates/tools.router.ts";
import { runRoutes } from "./templates/run.router.ts";
import { templateZipRoutes } from "./templates/zip.router.ts";
import { templateMediaRoutes } from "./templates/media.router.ts";
import { generationRoutes } from "./generations/generations.router.ts";
import { archiveRoutes } from "./generations/archives.router.ts";
import { adjustmentRoutes } from "./adjustments/adjustments.router.ts";
import { generatorRoutes } from "./generators/generators.router.ts";
import { generatorRunRoutes } from "./generators/run.router.ts";
import { environmentRoutes } from "./deployments/environments.router.ts";
import { deploymentRoutes } from "./deployments/deployments.router.ts";
import { deploymentActionRoutes } from "./deployments/actions.router.ts";
import { deploymentLogRoutes } from "./deployments/logs.router.ts";
import { testConnectionRoutes } from "./deployments/testConnection.router.ts";
import { uploadRoutes } from "./deployments/upload.router.ts";
import { webhookRoutes } from "./webhooks/webhooks.router.ts";
import { gitConnectionRoutes } from "./git/connections.router.ts";
import { gitOperationRoutes } from "./git/operations.router.ts";
import { kanbanBoardRoutes } from "./kanban/boards.router.ts";
import { kanbanColumnRoutes } from "./kanban/columns.router.ts";
import { kanbanCardRoutes } from "./kanban/cards.router.ts";
import { kanbanAssigneeRoutes } from "./kanban/assignees.router.ts";
import { kanbanLabelRoutes } from "./kanban/labels.router.ts";
import { kanbanCommentRoutes } from "./kanban/comments.router.ts";
import { storeManageRoutes } from "./store/manage.router.ts";
import { storeBrowseRoutes } from "./store/browse.router.ts";
import { storePlagiarismRoutes } from "./store/plagiarism.router.ts";
import { storePurchaseRoutes } from "./store/purchases.router.ts";
import { storeReviewRoutes } from "./store/reviews.router.ts";
import { storeSellerRoutes } from "./store/seller.router.ts";
import { storeMediaRoutes } from "./store/media.router.ts";
import { threadRoutes } from "./messages/threads.router.ts";
import { messageRoutes } from "./messages/messages.router.ts";
import { attachmentRoutes } from "./attachments/download.router.ts";
import { creditRoutes } from "./credits/credits.router.ts";
import { formDesignerAccessRoutes } from "./forms/access.router.ts";
import { formSetRoutes } from "./forms/sets.router.ts";
import { formWindowRoutes } from "./forms/windows.router.ts";
import { formElementRoutes } from "./forms/elements.router.ts";
import { creditPackageRoutes } from "./credits/packages.router.ts";
import { purchaseRoutes } from "./credits/purchase.router.ts";
import { paymentWebhookRoutes } from "./credits/webhooks.router.ts";
import { patronRoutes } from "./patron/patron.router.ts";
import { billingRoutes } from "./billing/billing.router.ts";
import { adminBillingRoutes } from "./admin/billing.router.ts";
import { projectFormRoutes } from "./projectForms/forms.router.ts";
import { projectReportRoutes } from "./projectForms/reports.router.ts";
import { reportImageRoutes } from "./projectForms/reportImages.router.ts";

export const allRoutes: RouteSpec[] = [
  ...systemRoutes,
  ...loginRoutes,
  ...passwordRoutes,
  ...emailRoutes,
  ...tokenRoutes,
  ...twoFactorRoutes,
  ...profileRoutes,
  ...sellerRoutes,
  ...adminUserRoutes,
  ...adminJobRoutes,
  ...auditLogRoutes,
  ...adminSettingsRoutes,
  ...settingsRoutes,
  ...pushRoutes,
  ...languageRoutes,
  ...performanceRoutes,
  ...visitRoutes,
  ...supportTicketRoutes,
  ...adminSupportTicketRoutes,
  ...adminConsoleRoutes,
  ...projectStateRoutes,
  ...bundleRoutes,
  ...projectRoutes,
  ...subscriptionRoutes,
  ...teamRoutes,
  ...memberRoutes,
  ...invitationRoutes,
  ...schemaExchangeRoutes,
  ...schemaRoutes,
  ...autoTranslateRoutes,
  ...translationRoutes,
  ...sqlParseRoutes,
  ...templateRoutes,
  ...topLevelTemplateRoutes,
  ...variableRoutes,
  ...fileRoutes,
  ...templateToolRoutes,
  ...runRoutes,
  ...templateZipRoutes,
  ...templateMediaRoutes,
  ...generationRoutes,
  ...archiveRoutes,
  ...adjustmentRoutes,
  ...generatorRoutes,
  ...generatorRunRoutes,
  ...environmentRoutes,
  ...testConnectionRoutes,
  ...uploadRoutes,
  ...deploymentRoutes,
  ...deploymentActionRoutes,
  ...deploymentLogRoutes,
  ...webhookRoutes,
  ...gitConnectionRoutes,
  ...gitOperationRoutes,
  ...kanbanBoardRoutes,
  ...kanbanColumnRoutes,
  ...kanbanCardRoutes,
  ...kanbanAssigneeRoutes,
  ...kanbanLabelRoutes,
  ...kanbanCommentRoutes,
  ...storeBrowseRoutes,
  ...storeManageRoutes,
  ...storePlagiarismRoutes,
  ...storePurchaseRoutes,
  ...storeReviewRoutes,
  ...storeSellerRoutes,
  ...storeMediaRoutes,
  ...threadRoutes,
  ...messageRoutes,
  ...attachmentRoutes,
  ...creditRoutes,
  ...formDesignerAccessRoutes,
  ...formSetRoutes,
  ...formWindowRoutes,
  ...formElementRoutes,
  ...creditPackageRoutes,
  ...purchaseRoutes,
  ...paymentWebhookRoutes,
  ...patronRoutes,
  ...billingRoutes,
  ...adminBillingRoutes,
  ...projectFormRoutes,
  ...projectReportRoutes,
  ...reportImageRoutes,
  ...jobRoutes,
  ...broadcastingRoutes,
];
