/** GitHub (and Gitea, Forgejo, GitHub Enterprise): webhook events become tasks, results become comments. */
export const id = "github"
export const name = "GitHub"
export const version = "1.0.0"
