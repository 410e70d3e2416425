"""Assistant packages on disk: package.yao, prompts, locales, hooks, ctx services, tools."""
