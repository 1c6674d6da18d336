// test hook: throws while loading, and names a function that does not exist
mcpworld.hook('no_such_function_anywhere', {onEnter() {}});
throw new Error('broken on purpose');
