// (in progress) registers the math functions
