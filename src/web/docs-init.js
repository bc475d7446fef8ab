// Starts Swagger UI on /openapi.json (a separate file: the docs page allows no inline script).
window.SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true })
